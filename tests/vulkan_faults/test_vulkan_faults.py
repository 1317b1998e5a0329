"""Vulkan fault paths of a generated project's binary: no device, out of device memory, device lost,
a missing optional feature, a missing shader, a malformed fault spec. Each must end in ONE line
`error: ...` on stderr and exit status 2 (README of runtime/vulkan: 0 pass, 1 mismatch, 2 error),
with no crash, no hang and no validation-layer message; the faults are injected through the
runtime's MSC_VK_FAULT test hook (runtime/vulkan/fault.h), all under VK_LAYER_KHRONOS_validation.
The same binary's --profile report is checked here too.

MSC_VK_PROJECTS: the generated project(s) to use, separated by ':' (ctest: the merged project of
every example that e2e_merged builds); the last must hold int64 kernels (text_transformer's indices).
"""
import os
import re
import subprocess

import pytest

PROJECTS = [os.path.abspath(p) for p in os.environ.get("MSC_VK_PROJECTS", "").split(":") if p]
VALIDATION = {"VK_INSTANCE_LAYERS": "VK_LAYER_KHRONOS_validation",
              "VK_LAYER_ENABLES": "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT",
              "MSC_VK_VALIDATION": "1"}


def binary(project):
    path = os.path.join(project, "build", "model")
    if not os.path.exists(path):
        pytest.fail("%s not built: run e2e_merged first (ctest fixture)" % path)
    return path


def run(project, env_extra, *args):
    env = dict(os.environ, **VALIDATION)
    env.pop("MSC_VK_FAULT", None)
    env.update(env_extra)
    return subprocess.run([binary(project), *args], cwd=project, env=env, capture_output=True,
                          text=True, timeout=300)


def assert_one_line_error(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    # The Vulkan loader logs its own failures ("vulkan: ERROR: ...", e.g. a missing driver JSON)
    # before ours; those lines are the loader's, not the project's.
    lines = [l for l in proc.stderr.strip().splitlines() if not l.startswith("vulkan: ")]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    text = proc.stdout + proc.stderr
    for bad in ("VUID", "Validation Error", "validation message", "terminate called", "Aborted",
                "Segmentation"):
        assert bad not in text, text


@pytest.fixture(scope="module")
def conv():
    if not PROJECTS:
        pytest.fail("MSC_VK_PROJECTS is not set")
    return PROJECTS[0]


def test_project_passes_without_faults(conv):
    proc = run(conv, {})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "golden check: PASS" in proc.stdout


def test_profile_reports_gpu_time_and_pipeline_creation(conv):
    """--profile: the GPU time per op type, then the start-up: pipelines created per shader module
    (harness.cc PrintPipelines), whose counts add up to the header's and whose times are positive."""
    proc = run(conv, {}, "--bench", "2", "--warmup", "1", "--profile")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(l.startswith("profile: GPU time per op type") for l in lines), proc.stdout
    head = [i for i, l in enumerate(lines) if l.startswith("pipelines: ")]
    assert len(head) == 1, proc.stdout
    m = re.match(r"pipelines: (\d+) created in ([\d.]+) ms on the host \(model build: ([\d.]+) ms\)",
                 lines[head[0]])
    assert m, lines[head[0]]
    rows = []
    for l in lines[head[0] + 1:]:
        r = re.match(r"  (\S+)\s+(\d+) pipelines\s+([\d.]+) ms\s+([\d.]+)%$", l)
        if not r:
            break
        rows.append((r.group(1), int(r.group(2)), float(r.group(3))))
    assert rows and sum(n for _, n, _ in rows) == int(m.group(1)), proc.stdout
    assert all(ms > 0 for _, _, ms in rows) and float(m.group(2)) <= float(m.group(3)), proc.stdout
    # The convolutions run one kernel module each ("<stem>@<kernel>", EmbedShaders.cmake).
    assert any("conv2d" in stem and "@" in stem for stem, _, _ in rows), proc.stdout


def test_no_vulkan_device(conv):
    proc = run(conv, {"VK_DRIVER_FILES": "/nonexistent/icd.json", "VK_ICD_FILENAMES": "/nonexistent/icd.json"})
    assert_one_line_error(proc, "no Vulkan device found", "mesa-vulkan-drivers")


@pytest.mark.parametrize("spec", ["oom", "oom@2"])  # the arena, then the weights
def test_out_of_device_memory(conv, spec):
    proc = run(conv, {"MSC_VK_FAULT": spec})
    assert_one_line_error(proc, "vkAllocateMemory(", "VK_ERROR_OUT_OF_DEVICE_MEMORY", "ran out of memory")


def test_device_lost(conv):
    proc = run(conv, {"MSC_VK_FAULT": "device-lost"})
    assert_one_line_error(proc, "vkQueueSubmit failed: VK_ERROR_DEVICE_LOST", "device was lost")


def test_missing_shader(conv):
    proc = run(conv, {"MSC_VK_FAULT": "no-shader=nn/conv2d"})
    assert_one_line_error(proc, "no Vulkan shader for op", "nn/conv2d")


def test_device_without_a_required_feature():
    """text_transformer's int64 kernels need shaderInt64: without it, a clear error naming it."""
    if not PROJECTS:
        pytest.fail("MSC_VK_PROJECTS is not set")
    proc = run(PROJECTS[-1], {"MSC_VK_FAULT": "no-feature=shaderInt64"})
    assert_one_line_error(proc, "shaderInt64")


@pytest.mark.parametrize("spec,needle", [("frobnicate", "is not a known fault"),
                                         ("oom@0", "call number that is not >= 1"),
                                         ("no-feature=shaderFloat128", "optional feature the runtime does not use")])
def test_malformed_fault_spec(conv, spec, needle):
    proc = run(conv, {"MSC_VK_FAULT": spec})
    assert_one_line_error(proc, "MSC_VK_FAULT: '%s' " % spec, needle)
