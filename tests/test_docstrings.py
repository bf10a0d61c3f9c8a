"""The shared docstring sections (mmit._utils._docstrings) are filled in everywhere."""

import inspect

import pytest

import mmit
from mmit import baselines
from mmit._utils._docstrings import SECTIONS, fill_doc

PUBLIC = [getattr(mmit, name) for name in mmit.__all__] + [
    baselines.ConstantRegressor, baselines.IntervalCART]


@pytest.mark.parametrize("obj", [obj for obj in PUBLIC if inspect.isclass(obj)],
                         ids=lambda obj: obj.__name__)
def test_no_placeholder_is_left(obj):
    docs = [obj.__doc__] + [member.__doc__ for _, member in inspect.getmembers(obj)
                            if callable(member) and member.__doc__]
    assert not [doc for doc in docs if "%(" in doc]


def test_a_section_takes_the_indentation_of_its_line():
    def function():
        """Summary.

        Parameters
        ----------
        %(fit_y)s
        """

    filled = fill_doc(function).__doc__
    expected = "\n".join("        " + line for line in SECTIONS["fit_y"].splitlines())
    assert expected in filled
    assert inspect.cleandoc(filled).splitlines()[4] == SECTIONS["fit_y"].splitlines()[0]


def test_an_unknown_section_is_an_error():
    def function():
        """%(no_such_section)s"""

    with pytest.raises(KeyError, match="no_such_section"):
        fill_doc(function)
