"""pytest setup: make <repo>/python importable and locate the shared MSC reference data."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

REFERENCE_DIR = os.environ.get("MSC_SHARED_REFERENCE_DIR",
                               os.path.join(os.path.dirname(REPO), "shared", "reference"))
