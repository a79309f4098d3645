"""run_code: results, logs, errors of the code, streaming callbacks, contexts, time limits."""

from __future__ import annotations

import pytest

from edge_sandbox import CodeContextNotFoundError, Result, Sandbox


def test_run_code_returns_the_last_expression(sandbox: Sandbox) -> None:
    execution = sandbox.run_code("import math\nmath.pi * 2")
    assert execution.text == "6.283185307179586"
    assert execution.error is None


def test_an_error_of_the_code_is_the_executions_error(sandbox: Sandbox) -> None:
    execution = sandbox.run_code("print('before')\n1/0")
    assert execution.logs.stdout == ["before\n"]
    assert execution.error is not None
    assert (execution.error.name, execution.error.value) == ("ZeroDivisionError", "division by zero")
    assert any("1/0" in line for line in execution.error.traceback)


def test_callbacks_stream_output_while_the_cell_runs(sandbox: Sandbox) -> None:
    stdout: list[str] = []
    stderr: list[str] = []
    results: list[Result] = []
    errors = []
    code = "import sys, time\nfor i in range(3):\n    print(i, flush=True); time.sleep(0.1)\nprint('warn', file=sys.stderr)\n{'a': 1}"
    execution = sandbox.run_code(code, on_stdout=stdout.append, on_stderr=stderr.append, on_result=results.append, on_error=errors.append)
    assert "".join(stdout) == "0\n1\n2\n" and len(stdout) >= 2
    assert "".join(stderr) == "warn\n"
    assert [r.text for r in results] == ["{'a': 1}"] and results[0].json == {"a": 1}
    assert errors == [] and execution.text == "{'a': 1}"


def test_a_figure_comes_as_png_with_its_chart(sandbox: Sandbox) -> None:
    code = "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\nplt.title('t')\nplt.show()"
    execution = sandbox.run_code(code)
    figures = [r for r in execution.results if r.png]
    assert len(figures) == 1
    assert "png" in figures[0].formats()
    assert figures[0].chart is not None and figures[0].chart.get("title") == "t"


def test_contexts_keep_state_apart(sandbox: Sandbox) -> None:
    first = sandbox.create_code_context()
    second = sandbox.create_code_context(language="python")
    sandbox.run_code("x = 41", context=first)
    assert sandbox.run_code("x + 1", context=first).text == "42"
    assert sandbox.run_code("x", context=second).error is not None
    assert first.id in [c.id for c in sandbox.list_code_contexts()]
    sandbox.delete_code_context(first)
    with pytest.raises(CodeContextNotFoundError):
        sandbox.run_code("x", context=first)


def test_javascript_and_a_cells_time_limit(sandbox: Sandbox) -> None:
    assert sandbox.run_code("[1, 2, 3].map(n => n * 2).join(',')", language="javascript").text == "'2,4,6'"
    execution = sandbox.run_code("import time\ntime.sleep(30)", timeout=0.5)
    assert execution.timed_out and execution.error is not None and execution.error.name == "KeyboardInterrupt"
