"""A hostile-input sweep of ``eviseek env serve``, ``eviseek esibench import`` and the flags.

Runs everything on 127.0.0.1 and prints one JSON line per probe (what was sent, what came back)
plus a summary. The session-cap probe opens ``--opens`` sessions at once against a real
``eviseek env serve --max-sessions 3`` (Tabletop) ``--trials`` times and records the most
sessions any trial got.

    PYTHONPATH=src .venv/bin/python scripts/hostile_sweep.py --out sweep.jsonl

The ``security`` probes (issue 37) each carry ``"ok"``: whether the server or client did what it
must (a path, a symlink and ``../`` in a reset read nothing; a server reply naming a client path
reads nothing; 64 idle strangers do not keep a token holder out for 2 s; a 144-megapixel file and
a FIFO under ``--asset-root`` are refused in under 1 s with the server under 200 MB; a 2 MB scene
is refused before building; ...). The last line counts the probes whose ``ok`` is false:

    PYTHONPATH=src .venv/bin/python scripts/hostile_sweep.py --only security

Every probe talks to 127.0.0.1 only, opens a bounded number of connections (at most 64 at
once) and waits a bounded time (each request at most 30 s).

Nothing here is a test: ``tests/envs/remote/test_hostile.py``, ``tests/envs/remote/test_security.py``,
``tests/cli/test_hostile_flags.py`` and ``tests/eval/esibench/test_import_hostile.py`` assert the
same behaviour.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import io
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image as PILImage

TOKEN = secrets.token_hex(16)
ENV = {**os.environ, "EVISEEK_ENV_TOKEN": TOKEN}
ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "esibench"


def cli(*args: str, timeout: float = 180, env: dict[str, str] | None = None) -> dict[str, Any]:
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "eviseek", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env or ENV,
    )
    err = [line for line in run.stderr.splitlines() if line.strip()]
    return {
        "rc": run.returncode,
        "stderr_lines": len(err),
        "first": err[0][:300] if err else "",
        "traceback": "Traceback" in run.stderr,
        "s": round(time.monotonic() - started, 1),
    }


def serve(*extra: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "eviseek", "env", "serve", "--port", "0", *extra],
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    assert proc.stderr is not None
    while True:
        line = proc.stderr.readline()
        found = re.search(r"at http://127\.0\.0\.1:(\d+)", line)
        if found:
            threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep the pipe drained
            return proc, int(found.group(1))
        if not line and proc.poll() is not None:
            raise SystemExit("env serve did not start")


def request(port: int, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers={"Authorization": f"Bearer {TOKEN}"})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cap_trials(port: int, opens: int, trials: int, cap: int) -> dict[str, Any]:
    most, held = 0, []
    for _ in range(trials):
        barrier = threading.Barrier(opens)
        got: list[tuple[int, bytes]] = []

        def one(barrier: threading.Barrier, got: list[tuple[int, bytes]]) -> None:
            barrier.wait()
            got.append(request(port, "POST", "/v1/envs", b""))

        threads = [threading.Thread(target=one, args=(barrier, got)) for _ in range(opens)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ok = [json.loads(b)["session"] for s, b in got if s == 200]
        info = json.loads(request(port, "GET", "/v1/info")[1])
        most = max(most, len(ok), info["sessions"])
        held.append(len(ok))
        for key in ok:
            request(port, "DELETE", f"/v1/envs/{key}")
    return {
        "trials": trials,
        "opens": opens,
        "cap": cap,
        "most_sessions": most,
        "held_per_trial": sorted(set(held)),
        "held": sum(1 for n in held if n <= cap),
        "ok": most <= cap,
    }


def png(width: int, height: int) -> bytes:
    buf = io.BytesIO()
    PILImage.new("1", (width, height)).save(buf, format="PNG")
    return buf.getvalue()


def server_probes(port: int, pid: int) -> list[dict[str, Any]]:
    out = []
    status, body = request(port, "POST", "/v1/envs", b"")
    key = json.loads(body)["session"]
    base = f"/v1/envs/{key}"
    for side in (9000, 20000):
        blob = png(side, side)
        head = {"seq": 1, "options": {"question": {"id": "q", "text": "?", "initial_image": {"blob": 0}}}}
        head["blobs"] = [{"nbytes": len(blob), "encoding": "png"}]
        before = rss_mb(pid)
        status, reply = request(port, "POST", f"{base}/reset", json.dumps(head).encode() + b"\n" + blob)
        out.append(
            {
                "probe": f"reset with a {side}x{side} PNG ({len(blob) // 1024} KiB body)",
                "status": status,
                "error": json.loads(reply).get("error", "")[:200],
                "rss_mb_before": round(before),
                "rss_mb_after": round(rss_mb(pid)),
                "ok": status == 400 and rss_mb(pid) < 200,
            }
        )
    malformed = {
        "not JSON": b"{not json\n",
        "a JSON list": b"[1]\n",
        "100,000 nested brackets": b"[" * 100_000 + b"\n",
        "invalid UTF-8": b"\xff\xfe\n",
        "no seq": b'{"action": {"name": "look_around"}}\n',
        "negative seq": b'{"seq": -1, "action": {"name": "look_around"}}\n',
        "seq as text": b'{"seq": "3", "action": {"name": "look_around"}}\n',
        "no action": b'{"seq": 3}\n',
        "action as text": b'{"seq": 3, "action": "x"}\n',
        "action without a name": b'{"seq": 3, "action": {"args": {}}}\n',
        "blobs not a list": b'{"seq": 3, "blobs": 1}\n',
        "unknown blob encoding": b'{"seq": 3, "blobs": [{"nbytes": 0, "encoding": "gif"}]}\n',
        "blob bytes missing": b'{"seq": 3, "blobs": [{"nbytes": 5, "encoding": "png"}]}\n',
        "raw blob of a bad shape": (
            b'{"seq": 3, "blobs": [{"nbytes": 4, "encoding": "raw", "shape": [2]}]}\nxxxx'
        ),
        "frame_ids as text": b'{"seq": 3, "frame_ids": "x"}\n',
        "options as a list": b'{"seq": 3, "options": []}\n',
    }
    for what, body in malformed.items():
        op = "visual_support" if "frame" in what else "reset" if "options" in what else "step"
        status, reply = request(port, "POST", f"{base}/{op}", body)
        error = json.loads(reply).get("error", "")
        one_line = "\n" not in error
        out.append(
            {
                "probe": what,
                "status": status,
                "one_line": one_line,
                "error": error[:160],
                "ok": 400 <= status < 500 and one_line,
            }
        )
    # seq: run seq 1 (reset), replay it, reuse it for something else, go back
    reset = b'{"seq": 1, "seed": 3}\n'
    first = request(port, "POST", f"{base}/reset?images=raw", reset)
    again = request(port, "POST", f"{base}/reset?images=raw", reset)
    other = request(port, "POST", f"{base}/reset?images=raw", b'{"seq": 1, "seed": 4}\n')
    request(port, "POST", f"{base}/legal_actions", b'{"seq": 2}\n')
    stale = request(port, "POST", f"{base}/legal_actions", b'{"seq": 1}\n')
    out.append(
        {
            "probe": "seq: replay / same seq other request / stale",
            "status": [first[0], again[0], other[0], stale[0]],
            "replay_identical": first[1] == again[1],
            "ok": [first[0], again[0], other[0], stale[0]] == [200, 200, 409, 409] and first[1] == again[1],
        }
    )
    request(port, "DELETE", base)
    return out


def slowloris(port: int, pid: int, n: int, every_s: float, seconds: float) -> dict[str, Any]:
    socks: list[socket.socket] = []
    refused = 0
    for _ in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"G")
            socks.append(s)
        except OSError:
            refused += 1
    threads_peak = 0
    end = time.monotonic() + seconds
    dropped = 0
    while time.monotonic() < end:
        alive = []
        for s in socks:
            try:
                s.sendall(b"E")
                alive.append(s)
            except OSError:
                dropped += 1
                s.close()
        socks = alive
        threads_peak = max(threads_peak, len(os.listdir(f"/proc/{pid}/task")))
        time.sleep(every_s)
    for s in socks:
        s.close()
    return {
        "probe": f"{n} trickling unauthenticated connections, one byte every {every_s}s for {seconds}s",
        "server_threads_peak": threads_peak,
        "dropped_or_refused_during": dropped,
        "still_open_at_end": len(socks),
        # Strangers wait at most 5 s each and at most 32 at once: the threads stay few.
        "ok": threads_peak < 60,
    }


def importer_probes(work: Path) -> list[dict[str, Any]]:
    sys.path.insert(0, str(ROOT))
    from tests.eval.esibench.test_import import answer_file

    from eviseek.eval.datasets import load_dataset

    qs = list(load_dataset(f"esibench:{FIXTURES}?images=skip"))
    results = work / "results"
    files = [
        answer_file(results, results / "steps", q, "yes", task_name=f"t{i}") for i, q in enumerate(qs[:12])
    ]

    def step_dir(f: Path) -> Path:
        return Path(json.loads(f.read_text())["step_image_dir"])

    noise = np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8)
    PILImage.fromarray(noise).save(step_dir(files[1]) / "step_001.png")
    data = (step_dir(files[1]) / "step_001.png").read_bytes()
    (step_dir(files[1]) / "step_001.png").write_bytes(data[: len(data) // 2])
    (step_dir(files[2]) / "step_001.png").write_text("not an image")
    PILImage.new("1", (20000, 20000)).save(step_dir(files[3]) / "step_001.png")
    files[4].write_text(files[4].read_text().replace('"step": 1', '"step": 1e400', 1))
    files[5].write_text('{"history": ' + "[" * 100_000 + "]" * 100_000 + "}")
    files[6].write_text(files[6].read_text().replace('"raw_output": "', '"raw_output": "\\ud800', 1))
    files[7].write_text(files[7].read_text().replace('"answer": "yes"', '"answer": "\\udfff"'))
    data8 = json.loads(files[8].read_text())
    data8["history"][0]["image"] = "/etc/hostname"
    files[8].write_text(json.dumps(data8))
    os.mkfifo(results / "t9" / "fifo_answer.json")
    files[10].write_text(files[10].read_text() + " " * (40 * 2**20))  # 40 MB
    out = []
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "eviseek", "esibench", "import", str(results), "--questions", str(FIXTURES),
         "--out", str(work / "run")],
        capture_output=True, text=True, env=ENV, timeout=300,
    )  # fmt: skip
    skipped = [
        line.split(": ", 1)[1][:160] for line in proc.stderr.splitlines() if line.startswith("skipped ")
    ]
    out.append(
        {
            "probe": "esibench import of 12 answer files (10 bad) + a FIFO",
            "rc": proc.returncode,
            "traceback": "Traceback" in proc.stderr,
            "stdout": proc.stdout.strip(),
            "skipped": skipped,
            "s": round(time.monotonic() - started, 1),
        }
    )
    a_file = work / "a_file"
    a_file.write_text("x")
    out.append(
        {
            "probe": "esibench import --out FILE",
            **cli("esibench", "import", str(results), "--questions", str(FIXTURES), "--out", str(a_file)),
        }
    )
    for flag in ("--max-answer-mb", "--max-image-mb", "--max-image-mpx"):
        for value in ("nan", "inf", "-1"):
            args = [
                "esibench",
                "import",
                str(results),
                "--questions",
                str(FIXTURES),
                "--out",
                str(work / "x"),
            ]
            out.append({"probe": f"esibench import {flag} {value}", **cli(*args, flag, value)})
    return out


def flag_probes(work: Path) -> list[dict[str, Any]]:
    out = []
    ev = ["eval", "--agents", "passive", "--model", "reference", "--dataset", "tabletop:dev", "--limit", "1",
          "--no-progress", "--out", str(work / "never")]  # fmt: skip
    for extra in (
        ["--env-url", ""], ["--env-url", "http://h:99999"], ["--env-url", "http://[::1"],
        ["--env-url", "http://h:1/path"], ["--env-url", "http://u:TOKEN@h:1"], ["--env-url", "http://h:1/?token=T"],
        ["--env-url", "http://127.0.0.1:9"], ["--timeout", "nan"], ["--timeout", "inf"],
        ["--ray-resource", "GPU=-1"], ["--ray-resource", "GPU=NaN"], ["--ray-resource", "GPU=1e400"],
    ):  # fmt: skip
        out.append({"probe": "eval " + " ".join(extra), **cli(*ev, *extra)})
    sv = ["env", "serve", "--env", "eviseek/Tabletop-v0", "--port", "0"]
    for extra in (
        ["--max-request-mb", "nan"], ["--max-request-mb", "inf"], ["--call-timeout", "inf"],
        ["--idle-timeout", "0"], ["--request-timeout", "nan"], ["--max-image-mpx", "inf"],
        ["--max-unauthenticated", "0"], ["--max-client-connections", "-1"], ["--env-arg", "width=-5"],
    ):  # fmt: skip
        out.append({"probe": "env serve " + " ".join(extra), **cli(*sv, *extra)})
    out.append(
        {
            "probe": "env check http://h:1/x",
            **cli("env", "check", "http://h:1/x", "--dataset", "tabletop:dev"),
        }
    )
    check = ["env", "check", "http://h:1", "--dataset", "tabletop:dev"]
    out.append({"probe": "env check --timeout nan", **cli(*check, "--timeout", "nan")})
    out.append(
        {"probe": "judge --timeout inf", **cli("judge", str(work), "--model", "openai/x", "--timeout", "inf")}
    )
    out.append({"probe": "report --confidence nan", **cli("report", str(work), "--confidence", "nan")})
    made = cli("eval", "--agents", "passive,eviseek", "--model", "reference", "--dataset", "tabletop:dev",
               "--limit", "1", "--no-progress", "--env-workers", "0", "--out", str(work / "cmp"))  # fmt: skip
    assert made["rc"] == 0, made
    same = cli("report", str(work / "cmp"), "--compare", "eviseek:eviseek")
    out.append({"probe": "report --compare eviseek:eviseek", **same})
    return out


# -- issue 37: the server and its client read no file a run does not own, and no lockout --------


def post(port: int, path: str, body: bytes, timeout: float = 30) -> tuple[int, dict[str, Any], float]:
    """One authorized POST; the status, the JSON head of the reply and the seconds it took."""
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, body=body, headers={"Authorization": f"Bearer {TOKEN}"})
        response = conn.getresponse()
        data = response.read()
    finally:
        conn.close()
    try:
        head = json.loads(data.partition(b"\n")[0])
    except ValueError:
        head = {"raw": data[:200].decode("utf-8", "replace")}
    return response.status, head, round(time.monotonic() - started, 3)


def reset_naming(path: str) -> bytes:
    question = {"id": "q", "text": "?", "initial_image": {"path": path, "width": 8, "height": 8}}
    return json.dumps({"seq": 1, "options": {"question": question}}).encode() + b"\n"


def session(port: int) -> str:
    status, body = request(port, "POST", "/v1/envs", b"")
    if status != 200:
        raise SystemExit(f"cannot open a session: {status} {body[:200]!r}")
    return str(json.loads(body)["session"])


def fifo_has_reader(path: Path) -> bool:
    """Whether some process holds ``path`` (a FIFO) open for reading right now."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return False  # ENXIO: nobody reads it
    os.close(fd)
    return True


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def path_probes(work: Path) -> list[dict[str, Any]]:
    """Path images in a reset, on a server without and with ``--asset-root``."""
    secret_dir = work / "secret"
    secret_dir.mkdir()
    secret = secret_dir / "private.png"
    PILImage.fromarray(np.full((8, 8, 3), 201, dtype=np.uint8)).save(secret)
    pipe = secret_dir / "pipe.png"
    os.mkfifo(pipe)  # opened by a server, it would block there (and show up as a reader)
    served = work / "served"
    served.mkdir()
    (served / "link.png").symlink_to(secret)
    (served / "pipe_link.png").symlink_to(pipe)
    PILImage.new("1", (12_000, 12_000)).save(served / "big.png")  # 144 Mpx in a few hundred KB
    os.mkfifo(served / "fifo.png")
    PILImage.fromarray(np.full((30, 40, 3), 9, dtype=np.uint8)).save(served / "ok.png")
    out: list[dict[str, Any]] = []
    names = {
        "absolute path": str(secret),
        "absolute path of a FIFO": str(pipe),
        "../ path": "../secret/private.png",
        "../ path of a FIFO": "../secret/pipe.png",
        "symlink out": str(served / "link.png"),
        "symlink out (relative name)": "link.png",
        "symlink to a FIFO": "pipe_link.png",
        "missing file": str(secret_dir / "none.png"),
    }
    for label, extra in (("no --asset-root", ()), ("--asset-root", ("--asset-root", str(served)))):
        proc, port = serve("--env", "eviseek/ImageZoom-v0", *extra)
        try:
            answers = {}
            for what, name in names.items():
                status, head, took = post(port, f"/v1/envs/{session(port)}/reset", reset_naming(name))
                error = str(head.get("error", ""))
                answers[what] = error.replace(name, "NAME")
                leak = str(work) in error.replace(name, "")
                out.append({
                    "probe": f"reset naming {what} ({label})", "status": status, "s": took,
                    "fifo_reader": fifo_has_reader(pipe), "error": error[:160],
                    "ok": status == 400 and took < 1.0 and not leak and not fifo_has_reader(pipe),
                })  # fmt: skip
            same = answers["absolute path"] == answers["missing file"]
            out.append({"probe": f"existing and missing files get the same answer ({label})", "ok": same})
            if extra:
                for name, why in (("big.png", "12000x12000 pixels"), ("fifo.png", "not an image file")):
                    status, head, took = post(port, f"/v1/envs/{session(port)}/reset", reset_naming(name))
                    peak = peak_rss_mb(proc.pid)
                    out.append({
                        "probe": f"reset naming {name} under --asset-root", "status": status, "s": took,
                        "server_peak_rss_mb": round(peak), "error": str(head.get("error", ""))[:160],
                        "ok": status == 400 and why in str(head.get("error")) and took < 1.0 and peak < 200,
                    })  # fmt: skip
                status, head, took = post(port, f"/v1/envs/{session(port)}/reset", reset_naming("ok.png"))
                out.append(
                    {"probe": "reset naming ok.png under --asset-root", "status": status, "ok": status == 200}
                )
        finally:
            proc.kill()
            proc.wait()
    return out


def malicious_server_probe(work: Path) -> dict[str, Any]:
    """A server whose reset reply names a file on the client's machine."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    sys.path.insert(0, str(ROOT))
    from tests.eval.toy_plugin import make_questions

    from eviseek.envs.remote import RemoteEnv
    from eviseek.errors import EnvError

    client_pipe = work / "client_pipe.png"
    os.mkfifo(client_pipe)
    image = {"path": str(client_pipe), "width": 8, "height": 8}
    body = json.dumps({"observation": {"image": image, "frame_id": 0}, "info": {}}).encode() + b"\n"
    opened = json.dumps({"session": "s", "env_id": "toy/Reveal-v0", "visual_support": False}).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self, data: bytes) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            self._answer(opened if self.path == "/v1/envs" else body)

        def do_DELETE(self) -> None:
            self._answer(b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    error, reader = "", False
    try:
        env = RemoteEnv(f"http://127.0.0.1:{httpd.server_address[1]}", token=TOKEN, timeout_s=10)
        done = threading.Event()

        def reset() -> None:
            nonlocal error
            try:
                env.reset(options={"question": make_questions(1)[0]})
            except EnvError as exc:
                error = str(exc)
            done.set()

        threading.Thread(target=reset, daemon=True).start()
        finished = done.wait(5.0)  # a client that opened the FIFO would block here
        reader = fifo_has_reader(client_pipe)
        env.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    return {
        "probe": "a server reply naming a client path (a FIFO)", "error": error[:200], "fifo_reader": reader,
        "ok": finished and not reader and "as a path instead of its bytes" in error,
    }  # fmt: skip


def lockout_probe() -> dict[str, Any]:
    """64 idle connections from one address, then a token holder opens a session and resets."""
    sys.path.insert(0, str(ROOT))
    from tests.eval.toy_plugin import make_questions  # noqa: F401  (the plugin registers its env)

    proc, port = serve("--env", "eviseek/Tabletop-v0")
    idle = []
    try:
        idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(64)]
        time.sleep(0.3)
        started = time.monotonic()
        status, _, _ = post(port, "/v1/envs", b"", timeout=2.0)
        took = time.monotonic() - started
    except OSError as exc:
        status, took = 0, float("inf")
        print(f"lockout probe: {exc}", file=sys.stderr)
    finally:
        for sock in idle:
            sock.close()
        proc.kill()
        proc.wait()
    return {
        "probe": "64 idle unauthenticated connections, then a token holder opens a session",
        "status": status, "s": round(took, 3), "ok": status == 200 and took < 2.0,
    }  # fmt: skip


def work_probes(work: Path) -> list[dict[str, Any]]:
    """Bounded work and HTTP hygiene on a Tabletop server."""
    from eviseek.envs.tabletop.generate import sample_question

    question = sample_question(0, render_images=False).model_dump(mode="json")
    objects = question["scene"]["objects"]
    template = dict(objects[0])
    big = json.loads(json.dumps(question))
    big["scene"]["objects"] = [{**template, "name": f"cube_{i}"} for i in range(6500)]
    bad_asset = json.loads(json.dumps(question))
    bad_asset["scene"]["objects"][0].update(shape="asset", asset="../../../../../../etc/hostname.urdf")
    out: list[dict[str, Any]] = []
    proc, port = serve("--env", "eviseek/Tabletop-v0")
    try:
        body = json.dumps({"seq": 1, "options": {"question": big}}).encode() + b"\n"
        before = cpu_s(proc.pid)
        status, head, took = post(port, f"/v1/envs/{session(port)}/reset", body)
        time.sleep(0.5)
        spent = cpu_s(proc.pid) - before
        out.append(
            {
                "probe": f"reset with a {len(body) / 1e6:.1f} MB scene of 6500 objects",
                "status": status,
                "s": took,
                "server_cpu_s": round(spent, 2),
                "error": str(head.get("error", ""))[:160],
                # The server's CPU, not the wall clock: on a shared machine the wall clock measures the load.
                "ok": status == 400 and len(body) > 2e6 and spent < 1.0,
            }
        )
        body = json.dumps({"seq": 1, "options": {"question": bad_asset}}).encode() + b"\n"
        status, head, took = post(port, f"/v1/envs/{session(port)}/reset", body)
        error = str(head.get("error", ""))
        out.append(
            {
                "probe": "reset with an asset named ../../etc/hostname.urdf",
                "status": status,
                "error": error[:160],
                "ok": status == 400 and "not a URDF of pybullet_data" in error,
            }
        )
        for what, seed in (("a 400-digit seed", "1" + "0" * 400), ("a negative seed", "-1")):
            status, head, _ = post(
                port, f"/v1/envs/{session(port)}/reset", f'{{"seq": 1, "seed": {seed}}}\n'.encode()
            )
            out.append(
                {
                    "probe": f"reset with {what}",
                    "status": status,
                    "ok": status == 400,
                    "error": str(head.get("error", ""))[:120],
                }
            )
        smuggled = f"GET /v1/info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode()
        head_text = f"POST /v1/nowhere HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        raw = (head_text + f"Content-Length: {len(smuggled)}\r\n\r\n").encode() + smuggled
        reply = b""
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(raw)
            with contextlib.suppress(TimeoutError):
                while chunk := sock.recv(65536):
                    reply += chunk
        answers = reply.count(b"HTTP/1.1 ")
        out.append(
            {
                "probe": "a request inside the body of one to an unknown route",
                "answers": answers,
                "ok": reply.startswith(b"HTTP/1.1 404") and answers == 1,
            }
        )
    finally:
        proc.kill()
        proc.wait()
    proc, port = serve("--env", "eviseek/ImageZoom-v0")
    try:
        noise = np.random.default_rng(0).integers(0, 255, (40, 40, 3), dtype=np.uint8)
        buf = io.BytesIO()
        PILImage.fromarray(noise).save(buf, format="PNG")
        blob = buf.getvalue()
        head = {"seq": 1, "options": {"question": {"id": "q", "text": "?", "initial_image": {"blob": 0}},
                "max_pixels": "lots"}, "blobs": [{"nbytes": len(blob), "encoding": "png"}]}  # fmt: skip
        status, reply_head, _ = post(
            port, f"/v1/envs/{session(port)}/reset", json.dumps(head).encode() + b"\n" + blob
        )
        out.append(
            {
                "probe": "reset with max_pixels='lots'",
                "status": status,
                "ok": status == 400,
                "error": str(reply_head.get("error", ""))[:120],
            }
        )
    finally:
        proc.kill()
        proc.wait()
    return out


def security_probes(work: Path) -> list[dict[str, Any]]:
    """Every issue-37 probe, each with ``ok``."""
    return [*path_probes(work), malicious_server_probe(work), lockout_probe(), *work_probes(work)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("hostile_sweep.jsonl"))
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--opens", type=int, default=40)
    parser.add_argument("--only", default="server,security,import,flags")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if "server" in args.only:
            proc, port = serve("--env", "eviseek/Tabletop-v0", "--max-sessions", "3")
            try:
                rows.append({"probe": "session cap", **cap_trials(port, args.opens, args.trials, 3)})
                rows.extend(server_probes(port, proc.pid))
            finally:
                proc.kill()
                proc.wait()
            proc, port = serve("--env", "eviseek/Tabletop-v0", "--request-timeout", "5")
            try:
                rows.append(slowloris(port, proc.pid, 150, 1.0, 12.0))
            finally:
                proc.kill()
                proc.wait()
        if "security" in args.only:
            rows.extend(security_probes(work))
        if "import" in args.only:
            rows.extend(importer_probes(work))
        if "flags" in args.only:
            rows.extend(flag_probes(work))
    with args.out.open("w") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
            print(json.dumps(row))
    judged = [row for row in rows if "ok" in row]
    failures = [row["probe"] for row in judged if not row["ok"]]
    print(
        f"{len(judged)} judged probes, {len(failures)} failures"
        + "".join(f"\n  failed: {f}" for f in failures)
    )
    if failures:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
