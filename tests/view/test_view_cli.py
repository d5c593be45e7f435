"""``respeval view`` from the command line: it prints where it listens, answers there with
the viewer (and the security headers), stops cleanly on Ctrl-C, and names what it cannot open."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from _helpers.paths import ROOT
from respeval.cli import main

pytest.importorskip("uvicorn", reason="respeval view needs uvicorn (pip install 'respeval[view]')")


def test_serves_until_interrupted(runs):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    with subprocess.Popen(
        [sys.executable, "-m", "respeval", "view", str(runs["eval_a"]), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    ) as proc:  # leaving closes its pipes
        try:
            line = b""
            deadline = time.monotonic() + 60
            while not line.endswith(b"\n") and time.monotonic() < deadline and proc.poll() is None:
                if select.select([proc.stdout], [], [], 1.0)[0]:
                    line += os.read(proc.stdout.fileno(), 4096)
            text = line.decode()
            assert text.startswith("respeval view: http://127.0.0.1:") and "1 run: 1. respeval evaluate" in text, text
            url = text.split()[2]
            with urllib.request.urlopen(url) as reply:
                page = reply.read().decode()
                assert reply.status == 200 and "default-src 'none'" in reply.headers["Content-Security-Policy"]
            assert "rows 1–30 of 30" in page  # opened on one run: its summary and first rows
            request = urllib.request.Request(url + "runs", method="POST", data=b"x")
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request)
            refused.value.close()  # the error holds the response, and its socket
            assert refused.value.code == 405
        finally:
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=30)
        stderr = proc.stderr.read().decode()
    assert code == 0
    assert "Ctrl-C stops it" in stderr


def test_names_what_it_cannot_open(tmp_path, capsys):
    assert main(["view", str(tmp_path / "absent"), "--port", "0"]) == 1
    assert "absent: no such file or directory" in capsys.readouterr().err
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    assert main(["view", str(tmp_path / "notes.json"), "--port", "0"]) == 1
    assert "not a run summary" in capsys.readouterr().err
    assert main(["view", str(tmp_path), "--port", "70000"]) == 1
    assert "a port is 0 to 65535" in capsys.readouterr().err
