"""Promises the repository makes to a newcomer."""

import re

from tests.conftest import ROOT

TEST_COMMAND = "pip install -r requirements-dev.txt && python -m pytest"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert TEST_COMMAND in readme and TEST_COMMAND in ci
    assert "pip install -r requirements.txt && streamlit run app.py" in readme


def test_requirements_never_pin_a_cuda_build():
    requirements = (ROOT / "requirements.txt").read_text()
    assert re.search(r"^torch>=2\.10$", requirements, re.MULTILINE)
    assert not re.search(r"torchvision", requirements)
    assert re.search(r"^streamlit>=1\.61$", requirements, re.MULTILINE)


def test_the_library_never_imports_streamlit():
    for path in (ROOT / "mlp").rglob("*.py"):
        assert not re.search(r"^\s*(import|from)\s+streamlit", path.read_text(), re.MULTILINE), path


def test_bundled_sample_is_package_data():
    sample = ROOT / "mlp" / "assets" / "mnist-sample"
    assert sorted(p.name for p in sample.glob("*.gz")) == [
        "sample-images-idx3-ubyte.gz",
        "sample-labels-idx1-ubyte.gz",
    ]
