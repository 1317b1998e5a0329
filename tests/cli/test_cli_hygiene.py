"""Command-line hygiene: --version, unknown subcommands (also beside --help), and the bash
completion script `msc-codegen completion bash` derives from the CLI11 definition."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, run_cli


def project_version():
    """VERSION of project() in the top-level CMakeLists.txt."""
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(\s*\S+\s+VERSION\s+([0-9.]+)", f.read()).group(1)


def subcommands_from_help():
    """Subcommand names as `msc-codegen --help` lists them (the SUBCOMMANDS section)."""
    text = run_cli("--help").stdout
    section = text.split("Subcommands:", 1)[1]
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ") and line.split()]


def test_version_is_project_version_and_git_describe():
    proc = run_cli("--version")
    line = proc.stdout.strip()
    m = re.fullmatch(r"msc-codegen (\S+)(?: \(git (\S+)\))?", line)
    assert m, line
    assert m.group(1) == project_version()
    if os.path.exists(os.path.join(ROOT, ".git")) and shutil.which("git"):
        # configure-time `git describe --always --dirty`; the commit part must be this checkout's HEAD
        head = subprocess.run(["git", "--no-optional-locks", "describe", "--always"], cwd=ROOT,
                              capture_output=True, text=True)
        if head.returncode == 0:
            assert m.group(2) is not None, line
            assert re.sub(r"-dirty$", "", m.group(2)) == head.stdout.strip()


@pytest.mark.parametrize("args", [["frobnicate", "--help"], ["--help", "frobnicate"], ["frobnicate"],
                                  ["--templates", "/tmp", "frobnicate", "-h"], ["frobnicate", "--version"]])
def test_unknown_subcommand_is_an_error_even_with_help(args):
    proc = run_cli(*args, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "error: unknown subcommand 'frobnicate'" in proc.stderr
    assert "generate" in proc.stderr  # lists the real subcommands
    assert "Usage" not in proc.stdout  # no help printed as if all was well


def test_leftover_argument_beside_subcommand_help_is_an_error():
    proc = run_cli("generate", "frobnicate", "--help", check=False)
    assert proc.returncode == 2
    assert "frobnicate" in proc.stderr and "Usage" not in proc.stdout


def test_help_still_works():
    assert "Subcommands:" in run_cli("--help").stdout
    assert "--backend" in run_cli("generate", "--help").stdout
    assert run_cli("-h").returncode == 0


# ---- bash completion ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def completion_script(tmp_path_factory):
    path = tmp_path_factory.mktemp("completion") / "msc-codegen.bash"
    path.write_text(run_cli("completion", "bash").stdout)
    return path


def complete(script, *words, cwd=None):
    """COMPREPLY of the generated function for the command line `words`, cursor on the last word."""
    words = ["msc-codegen", *words]
    array = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    program = ('set -u; source "$1"; COMP_WORDS=(%s); COMP_CWORD=%d; COMP_LINE="${COMP_WORDS[*]}"; '
               '_msc_codegen; printf "%%s\\n" "${COMPREPLY[@]}"; complete -p msc-codegen >&2'
               % (array, len(words) - 1))
    proc = subprocess.run(["bash", "--norc", "-c", program, "bash", str(script)], capture_output=True,
                          text=True, cwd=cwd, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "-F _msc_codegen msc-codegen" in proc.stderr  # registered for the command
    return [w for w in proc.stdout.splitlines() if w]


def test_completion_subcommand_prefix(completion_script):
    assert complete(completion_script, "gen") == ["generate"]


def test_completion_option_prefix(completion_script):
    assert complete(completion_script, "generate", "--ba") == ["--backend"]


def test_completion_lists_every_subcommand_of_help(completion_script):
    """Derived from the CLI definition: whatever --help lists (e.g. a newly added subcommand)."""
    subs = subcommands_from_help()
    assert {"generate", "import", "ops", "completion"} <= set(subs)
    assert sorted(complete(completion_script, "")) == sorted(subs)


def test_completion_options_match_subcommand_help(completion_script):
    for sub in subcommands_from_help():
        help_text = run_cli(sub, "--help").stdout
        # the first column of the option lines: "  -h,--help  ...", "  --graph TEXT REQUIRED  ..."
        listed = {name for line in help_text.splitlines() if line.startswith("  -")
                  for name in line.split()[0].split(",")}
        offered = set(complete(completion_script, sub, "-"))
        assert listed == offered, (sub, listed ^ offered)


def test_completion_skips_option_values_and_completes_files(completion_script, tmp_path):
    # the value of a top-level option is not taken for the subcommand
    assert complete(completion_script, "--templates", "generate", "gen") == ["generate"]
    assert complete(completion_script, "--opdefs", "x", "va") == ["validate"]
    # option values and positionals are files
    (tmp_path / "graph.json").write_text("{}")
    (tmp_path / "gx.txt").write_text("")
    assert complete(completion_script, "generate", "--graph", "gra", cwd=tmp_path) == ["graph.json"]
    assert complete(completion_script, "inspect", "gr", cwd=tmp_path) == ["graph.json"]
    # generate takes no positional: nothing to offer for a bare word
    assert complete(completion_script, "generate", "gr", cwd=tmp_path) == []
    # a subcommand's options do not include the top-level ones (CLI11 does not fall through)
    assert "--templates" not in complete(completion_script, "generate", "--")
    assert "--version" in complete(completion_script, "--")


def test_completion_offers_checked_choices(completion_script):
    assert complete(completion_script, "completion", "") == ["bash"]
    proc = run_cli("completion", "zsh", check=False)
    assert proc.returncode == 2 and "zsh" in proc.stderr


def test_generated_script_is_valid_bash(completion_script):
    proc = subprocess.run(["bash", "-n", str(completion_script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
