"""Docstring sections that several estimators share, written once.

A docstring of a function decorated with :func:`fill_doc` names a shared
section with a line that holds only ``%(name)s``; the section's lines
replace it at that line's indentation (as MNE-Python's ``fill_doc``).
"""

import re

SECTIONS = {
    "fit_X": """\
X : array-like of shape (n_samples, n_features)
    Training features; NaN marks a missing value.""",
    "fit_y": """\
y : array-like of shape (n_samples, 2) or (n_samples,)
    Lower and upper bound of each target interval (``-inf``/``+inf``
    allowed), or exact values.""",
    "features_in": """\
n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (n_features_in_,)
    Names of the features, when X was a DataFrame with string columns.""",
    "predict": """\
Parameters
----------
X : array-like of shape (n_samples, n_features)

Returns
-------
y_pred : ndarray of shape (n_samples,)""",
}

_PLACEHOLDER = re.compile(r"^( *)%\((\w+)\)s$", re.MULTILINE)


def fill_doc(obj):
    """Replace the shared-section lines of the docstring of ``obj`` (a
    function or a class; KeyError for an unknown name) and return ``obj``."""

    def section(match):
        indent, name = match.groups()
        return "\n".join(indent + line if line else line
                         for line in SECTIONS[name].splitlines())

    obj.__doc__ = _PLACEHOLDER.sub(section, obj.__doc__)
    return obj
