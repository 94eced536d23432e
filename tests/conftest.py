"""The terminal summary's figures, whichever process ran the test.

``summary_line`` (a fixture) adds a line to the section "scheduler
functional figures" of the terminal summary (race, fault and redelivery
figures) and prints it. The line travels on the test's report
(``user_properties``), so it reaches the summary also when the suite runs
in several processes (``pytest -n``, pytest-xdist): each report comes
back to the process that writes the summary. This file is at the top of
``tests`` because that process loads only the conftest files above the
paths it is given.
"""

import pytest

#: the user property that carries a summary line on a test's report
FIGURE = 'scheduler-figure'
_FIGURES = []


@pytest.fixture
def summary_line(request):
    """Call with a line to show in the terminal summary (and print it)."""
    def add(line):
        print(line)
        request.node.user_properties.append((FIGURE, line))
    return add


def pytest_runtest_logreport(report):
    if report.when == 'teardown':
        _FIGURES.extend(value for name, value in report.user_properties
                        if name == FIGURE)


def pytest_terminal_summary(terminalreporter):
    if _FIGURES:
        terminalreporter.section('scheduler functional figures')
        for line in _FIGURES:
            terminalreporter.write_line(line)
