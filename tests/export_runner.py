"""Runs exported scripts in one interpreter started with `python -I` (the project not importable),
each in a folder of its own, and prints each one's output between markers (tests/test_export.py)."""

import contextlib
import io
import json
import os
import runpy
import sys

if __name__ == "__main__":
    outputs = {}
    for folder in sys.argv[1:]:
        os.chdir(folder)
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                runpy.run_path("run.py", run_name="__main__")
        except Exception as err:  # the test shows it beside the script's output
            out.write(f"\nFAILED: {type(err).__name__}: {err}\n")
        outputs[folder] = out.getvalue()
    print(json.dumps(outputs))
