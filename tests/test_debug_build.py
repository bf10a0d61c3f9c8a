"""The test suites again, against extensions compiled with checks on.

``tests/debug_build.py`` builds the extensions with ``MMIT_DEBUG=1`` in a
copy of the sources and runs the kernel test modules against that build, in
the background from the start of the session (``tests/conftest.py``); these
tests wait for it and read what it found.
"""

import contextlib
import io
import xml.etree.ElementTree as ElementTree

import pytest
from debug_build import DEBUG_RUN, FIT_AND_HASH, SUITES, available


@pytest.fixture(scope="module")
def debug_run(request):
    """The folder where the background run wrote its results, once it is
    done (the run the session started when it collected these tests)."""
    if not available():
        pytest.skip("needs the source tree")
    process, folder = request.config.stash[DEBUG_RUN]
    process.wait()
    status = (folder / "build.status").read_text()
    assert status == "0", (folder / "build.log").read_text()[-5000:]
    return folder


def test_debug_build_has_checks_on(debug_run):
    assert (debug_run / "flag.status").read_text() == "0", (
        debug_run / "flag.log").read_text()
    flag, path = (debug_run / "flag.log").read_text().split()
    assert flag == "True" and path.startswith(str(debug_run / "build"))


@pytest.mark.parametrize("suite", SUITES)
def test_suite_passes_with_checks_on(debug_run, suite):
    report = debug_run / "suites.xml"
    assert report.exists(), (debug_run / "suites.log").read_text()[-5000:]
    module = "tests." + suite.removesuffix(".py").replace("/", ".")
    cases = [case for case in ElementTree.parse(report).iter("testcase")
             if case.get("classname", "").startswith(module)]
    log = (debug_run / "suites.log").read_text()
    assert cases, f"no test of {suite} ran:\n{log[-3000:]}"
    failed = [f"{case.get('name')}: {problem.get('message', '')[:2000]}"
              for case in cases for problem in case
              if problem.tag in ("failure", "error")]
    assert failed == []


def test_tree_is_identical_with_checks_on(debug_run):
    assert (debug_run / "hashes.status").read_text() == "0", (
        debug_run / "hashes.log").read_text()
    release = io.StringIO()  # the same fits with the build under test
    with contextlib.redirect_stdout(release):
        exec(FIT_AND_HASH, {})
    assert (debug_run / "hashes.log").read_text().split() == release.getvalue().split()
