"""The ``autograph`` command line: demo, code, bench."""

import io
import json
import os
import subprocess
import sys
import textwrap

import pytest

from autograph.cli import main


def test_demo_prints_generated_code_and_results(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for name in ("huber_loss", "collatz", "count_to_five"):
        assert f"def {name}(" in out
    assert "ag__.while_stmt" in out and "ag__.if_stmt" in out
    assert "result: 111" in out                      # collatz(27), eager
    assert "Array(111" in out                        # collatz(27), compiled
    assert out.count("time per call: eager") == 3


def test_code_prints_the_generated_code_of_a_file_function(tmp_path, capsys):
    source = tmp_path / "user_code.py"
    source.write_text(textwrap.dedent("""\
        def clip(x):
            if x > 1.0:
                x = 1.0
            return x
    """))
    assert main(["code", f"{source}:clip"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("def clip(x):")
    assert "ag__.if_stmt" in out


def test_code_file_may_import_its_neighbours(tmp_path, capsys):
    (tmp_path / "helpers_for_cli_test.py").write_text("LIMIT = 3\n")
    (tmp_path / "main_file.py").write_text(textwrap.dedent("""\
        from helpers_for_cli_test import LIMIT

        def count(n):
            while n < LIMIT:
                n += 1
            return n
    """))
    assert main(["code", f"{tmp_path / 'main_file.py'}:count"]) == 0
    assert "ag__.while_stmt" in capsys.readouterr().out


def test_code_reports_a_file_that_fails_to_import(tmp_path, capsys):
    source = tmp_path / "broken.py"
    source.write_text("raise RuntimeError('boom')\n")
    assert main(["code", f"{source}:f"]) == 1
    assert "RuntimeError: boom" in capsys.readouterr().err


@pytest.mark.parametrize(("target", "message"), [
    ("no_colon_here", "expected FILE.py:FUNCTION"),
    ("missing_file.py:f", "no such file: missing_file.py"),
    ("{file}:absent", "no function 'absent'"),
])
def test_code_bad_arguments_exit_2_with_a_clear_message(tmp_path, capsys, target, message):
    source = tmp_path / "mod.py"
    source.write_text("def present(x):\n    return x\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["code", target.format(file=source)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    if "absent" in target:
        assert "present" in err                      # lists what is there


def test_unknown_command_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["frobnicate"])
    assert exit_info.value.code == 2


def test_bench_help_shows_examples(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "--quick" in out and "examples:" in out and "autograph bench" in out


def test_bench_unknown_workload_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--only", "no_such_workload"])
    assert exit_info.value.code == 2
    assert "unknown workload" in capsys.readouterr().err


def test_bench_quick_single_workload_writes_json(tmp_path):
    # In a process of its own, as users run it: the harness collects garbage between
    # timings, which costs minutes in a test process holding the whole suite's heap.
    out_dir = tmp_path / "bench"
    done = _autograph("bench", "--quick", "--only", "huber_scalar", "--no-scaling",
                      "--no-chart", "--out", str(out_dir))
    assert done.returncode == 0, done.stderr
    results = json.loads((out_dir / "results.json").read_text())
    impls = results["workloads"][0]["impls"]
    assert {"eager", "autograph", "hand_lax"} <= set(impls)
    out = done.stdout
    assert "[1/1] huber_scalar" in out               # the progress line
    assert "Per-call time" in out


def test_python_dash_m_autograph_runs_the_cli():
    done = subprocess.run([sys.executable, "-m", "autograph", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    assert "demo" in done.stdout and "bench" in done.stdout


def _autograph(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "autograph", *args], capture_output=True,
                          text=True, timeout=300, **kwargs)


@pytest.mark.parametrize(("exit_call", "shown"), [
    ("sys.exit(3)", "sys.exit(3)"),
    ("sys.exit()", "sys.exit()"),
    ("sys.exit(0)", "sys.exit(0)"),
    ("sys.exit('usage: script.py N')", "sys.exit('usage: script.py N')"),
    ("raise SystemExit(main())", "sys.exit(7)"),
])
def test_code_on_a_script_that_exits_at_import_says_so(tmp_path, exit_call, shown):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(f"""\
        import sys

        def f(x):
            if x > 0:
                x = -x
            return x

        def main():
            return 7

        {exit_call}
    """))
    done = _autograph("code", f"{script}:f")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert f"importing {script} exited ({shown})" in done.stderr
    assert 'if __name__ == "__main__":' in done.stderr


def test_code_on_a_guarded_script_prints_the_code(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""\
        import sys

        def f(x):
            while x > 1:
                x = x // 2
            return x

        if __name__ == "__main__":
            sys.exit(f(int(sys.argv[1])))
    """))
    done = _autograph("code", f"{script}:f")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("def f(x):") and "ag__.while_stmt" in done.stdout


@pytest.mark.parametrize(("make_out", "message"), [
    (lambda tmp: tmp / "a_file.txt", "is a file, not a directory"),
    (lambda tmp: tmp / "a_file.txt" / "below", "cannot write there"),
    (lambda tmp: "/proc/no_such_dir/results", "cannot write there"),
])
def test_bench_out_that_cannot_be_written_exits_2_with_a_message(tmp_path, make_out, message):
    (tmp_path / "a_file.txt").write_text("keep me\n")
    out = make_out(tmp_path)
    done = _autograph("bench", "--quick", "--only", "huber_scalar", "--no-scaling",
                      "--no-chart", "--out", str(out))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"--out {out}: {message}" in done.stderr
    assert "huber_scalar" not in done.stdout        # refused before running the suite
    assert (tmp_path / "a_file.txt").read_text() == "keep me\n"


def test_output_into_a_closed_pipe_stops_quietly():
    """``autograph demo | head -1``: no BrokenPipeError traceback, as Unix tools."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}   # each line written as printed
    done = subprocess.run(
        ["bash", "-c", f'"{sys.executable}" -m autograph demo --only huber_loss | head -1; '
                       'echo "status ${PIPESTATUS[0]}" >&2'],
        capture_output=True, text=True, timeout=300, env=env)
    assert done.stdout == "=" * 72 + "\n"
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "status 141"


def test_main_returns_141_when_stdout_is_a_closed_pipe(monkeypatch):
    class ClosedPipe(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["bench", "--list"]) == 141
