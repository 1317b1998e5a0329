"""The Debian package: `cpack -G DEB` on the build tree, unpacked with `dpkg -x` into a temporary
root (no root install): control fields, Depends covering every shared library the binary links,
and the unpacked binary working from its own share/msc-codegen (version, generate, the torch
project's golden test, the vulkan runtime copy, bash completion).

Runs as its own ctest entry (`packaging`); MSC_BUILD_DIR is the build tree (default: the folder of
$MSC_CODEGEN)."""
import glob
import os
import re
import subprocess
import sys

import pytest

from conftest import BINARY, REFERENCE, ROOT

BUILD = os.environ.get("MSC_BUILD_DIR", os.path.dirname(os.path.abspath(BINARY)))
CONV_RELU = os.path.join(REFERENCE, "msc-real", "conv_relu")


def run(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kw)
    assert proc.returncode == 0, "%s\n%s%s" % (" ".join(map(str, cmd)), proc.stdout, proc.stderr)
    return proc


def clean_env():
    """The environment without MSC_CODEGEN_HOME, so the binary has to find its data itself."""
    return {k: v for k, v in os.environ.items() if k != "MSC_CODEGEN_HOME"}


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """(path of the .deb, unpacked root). cpack works in a temporary folder, not the build tree."""
    work = tmp_path_factory.mktemp("cpack")
    run(["cpack", "-G", "DEB", "--config", os.path.join(BUILD, "CPackConfig.cmake"), "-B", work])
    debs = glob.glob(str(work / "*.deb"))
    assert len(debs) == 1, debs
    root = work / "root"
    run(["dpkg", "-x", debs[0], root])
    return debs[0], root


def control(deb):
    fields = {}
    for name in ("Package", "Version", "Architecture", "Maintainer", "Description", "Depends"):
        fields[name] = run(["dpkg-deb", "-f", deb, name]).stdout.strip()
    return fields


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(\s*\S+\s+VERSION\s+([0-9.]+)", f.read()).group(1)


def linked_packages(binary):
    """Debian packages owning the shared libraries `binary` links directly (its NEEDED entries,
    located by ldd, owners by dpkg -S)."""
    needed = set(re.findall(r"^\s*NEEDED\s+(\S+)", run(["objdump", "-p", binary]).stdout, re.M))
    assert any(n.startswith("libyaml-cpp") for n in needed), needed
    packages = set()
    for line in run(["ldd", binary]).stdout.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+)", line)
        if not m or m.group(1) not in needed:
            continue  # linux-vdso, the dynamic loader, libraries only the linked ones need
        path = os.path.realpath(m.group(2))
        owner = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if owner.returncode != 0:  # merged /usr: dpkg knows the /lib spelling
            owner = subprocess.run(["dpkg", "-S", re.sub(r"^/usr/lib/", "/lib/", path)], capture_output=True,
                                   text=True)
        assert owner.returncode == 0, "no package owns %s (%s)" % (path, m.group(1))
        packages.add(owner.stdout.split(":")[0].strip())
    return packages


def test_control_fields(package):
    deb, _ = package
    fields = control(deb)
    assert fields["Package"] == "msc-codegen"
    assert fields["Version"] == project_version()
    assert re.match(r".+ <[^@\s]+@[^>\s]+>$", fields["Maintainer"]), fields["Maintainer"]
    assert "MSCGraph" in fields["Description"] and "\n" in fields["Description"]  # summary + long text
    depends = {re.split(r"[\s(]", d.strip())[0] for d in fields["Depends"].split(",")}
    missing = linked_packages(BINARY) - depends
    assert not missing, "Depends %s lacks %s" % (fields["Depends"], sorted(missing))


def test_layout(package):
    _, root = package
    usr = root / "usr"
    assert os.access(usr / "bin" / "msc-codegen", os.X_OK)
    share = usr / "share" / "msc-codegen"
    for rel in ("opdefs/nn.yaml", "templates/torch/backend.yaml", "templates/vulkan/backend.yaml",
                "runtime/vulkan/CMakeLists.txt", "runtime/vulkan/msc_vk.h"):
        assert (share / rel).is_file(), rel
    # the packaged completion script is the one the packaged binary prints
    completion = usr / "share" / "bash-completion" / "completions" / "msc-codegen"
    printed = run([usr / "bin" / "msc-codegen", "completion", "bash"], env=clean_env()).stdout
    assert completion.read_text() == printed
    # a stripped binary, and nothing outside /usr
    assert sorted(os.listdir(root)) == ["usr"]
    assert ".debug_info" not in run(["objdump", "-h", usr / "bin" / "msc-codegen"]).stdout


def test_unpacked_binary_version_and_data(package):
    _, root = package
    binary = root / "usr" / "bin" / "msc-codegen"
    version = run([binary, "--version"], env=clean_env()).stdout
    assert version == run([BINARY, "--version"]).stdout
    assert version.startswith("msc-codegen %s" % project_version())
    # --help shows the data folders it found: the unpacked share/, not the source tree
    help_text = run([binary, "--help"], env=clean_env()).stdout
    assert str(root / "usr" / "share" / "msc-codegen" / "templates") in help_text
    assert str(root / "usr" / "share" / "msc-codegen" / "opdefs") in help_text


def test_unpacked_binary_generates_a_passing_torch_project(package, tmp_path, real_golden):
    _, root = package
    binary = root / "usr" / "bin" / "msc-codegen"
    out = tmp_path / "torch"
    run([binary, "generate", "--graph", os.path.join(CONV_RELU, "graph.json"), "--weights",
         os.path.join(CONV_RELU, "weights.safetensors"), "--backend", "torch", "--out", out, "--golden",
         real_golden("conv_relu")], env=clean_env())
    proc = subprocess.run([sys.executable, "test_model.py"], cwd=out, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASSED" in proc.stdout


def test_unpacked_binary_copies_the_vulkan_runtime(package, tmp_path):
    _, root = package
    out = tmp_path / "vulkan"
    run([root / "usr" / "bin" / "msc-codegen", "generate", "--graph", os.path.join(CONV_RELU, "graph.json"),
         "--weights", os.path.join(CONV_RELU, "weights.bin"), "--backend", "vulkan", "--out", out],
        env=clean_env())
    packaged = root / "usr" / "share" / "msc-codegen" / "runtime" / "vulkan"
    assert (out / "runtime" / "msc_vk.h").read_bytes() == (packaged / "msc_vk.h").read_bytes()
    assert (out / "model.cc").is_file()
