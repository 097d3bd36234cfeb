"""memtape.lab.ray_engine and ``memtape bench --engine ray``: each cell a Ray task on a
local instance this module starts (two CPUs) and stops, giving the serial run's results."""

# Tests read `assert expected == actual`, which SIM300 would turn around.

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import ray

from memtape.cli import main
from memtape.core.errors import Rejected
from memtape.core.extras import install_hint
from memtape.lab.bench import Cell, Result, plan, results_data, run_cells, serial
from memtape.lab.ray_engine import _run_shipped, ray_engine
from memtape.scenarios import read_scenario
from tests.llm_runs import DESK_STEPS, scenario
from tests.llm_server import ChatServer

ROOT = Path(__file__).resolve().parent.parent

TIMED = {"decide_us_per_command", "llm_seconds"}
"""The metrics that are wall-clock times, which no two runs share."""

SCENARIOS = ["refund-desk", "dana-facts"]
POLICIES = ["tiered", "rolling-summary:keep=4", "importance-recency-access", "recorded"]
"""``recorded`` has nothing to apply to refund-desk: an idle cell, as under a pool."""


@pytest.fixture(scope="class")
def local_ray() -> Iterator[None]:
    """A local Ray instance of two CPUs for this module's tests."""
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.WARNING,
    )
    try:
        yield
    finally:
        ray.shutdown()


def _untimed(results: list[Result]) -> list[dict[str, Any]]:
    data = results_data(results)["results"]
    for result in data:
        for name in TIMED:
            result["metrics"].pop(name)
    return list(data)


def _untimed_json(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text("utf-8"))["results"]
    for result in data:
        for name in TIMED:
            result["metrics"].pop(name)
    return list(data)


def _same_but_times(first: Result, second: Result) -> bool:
    untimed = [
        {
            **attrs.asdict(r, recurse=False),
            "metrics": {k: v for k, v in r.metrics.items() if k not in TIMED},
        }
        for r in (first, second)
    ]
    return bool(untimed[0] == untimed[1])


@ray.remote
def _cwd() -> str:
    return os.getcwd()


@pytest.mark.usefixtures("local_ray")
# One worker runs the class, so one Ray instance starts (each worker would start its own).
@pytest.mark.xdist_group("local_ray")
class TestOnALocalInstance:
    def test_every_cell_gives_what_it_gives_serially(self) -> None:
        cells = plan(SCENARIOS, POLICIES, grid=["compaction.budget=40,60"])

        on_ray = run_cells(cells, engine=ray_engine())

        alone = run_cells(cells, engine=serial)
        assert [c.label for c in cells] == [r.label for r in on_ray]
        assert all(map(_same_but_times, alone, on_ray))
        assert [r.idle for r in alone] == [r.idle for r in on_ray]
        assert any(r.idle is not None for r in on_ray)

    def test_the_json_of_the_command_is_the_serial_ones(self, tmp_path: Path) -> None:
        bench = ["bench", *SCENARIOS, *(p for name in POLICIES for p in ("--policy", name)), "-q"]
        assert 0 == main([*bench, "--engine", "ray", "--json", str(tmp_path / "ray.json")])
        assert 0 == main([*bench, "--jobs", "1", "--json", str(tmp_path / "serial.json")])

        assert _untimed_json(tmp_path / "serial.json") == _untimed_json(tmp_path / "ray.json")

    def test_a_scenario_file_travels_by_value(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Named by a path the workers cannot resolve: they are not in this directory."""
        scenario(
            tmp_path / "desk.toml", "http://127.0.0.1:9/v1", compaction='summarizer = "salient"'
        )
        monkeypatch.chdir(tmp_path)
        assert str(tmp_path) != ray.get(_cwd.remote())
        cells = plan(["desk.toml"], ["tiered", "rolling-summary"])

        on_ray = run_cells(cells, engine=ray_engine())

        assert all(map(_same_but_times, run_cells(cells, engine=serial), on_ray))

    def test_a_task_needs_the_scenarios_text_only(self, tmp_path: Path) -> None:
        path = scenario(tmp_path / "desk.toml", "http://127.0.0.1:9/v1", compaction="")
        (cell,) = plan([str(path)], ["tiered"])
        text = read_scenario(str(path))
        path.unlink()

        shipped = _run_shipped(cell, text, None)

        assert isinstance(shipped, Result)
        assert 4 <= shipped.metrics["compactions"]

    def test_progress_hears_of_each_cell_once_as_it_finishes(self) -> None:
        cells = plan(SCENARIOS, ["tiered", "importance-recency-access"])
        heard: list[tuple[int, int, Cell]] = []
        finished: list[Cell] = []

        run_cells(
            cells,
            engine=ray_engine(),
            progress=lambda done, total, cell: heard.append((done, total, cell)),
            finished=lambda cell, result: finished.append(cell),
        )

        assert [(n, len(cells)) for n in range(1, len(cells) + 1)] == [h[:2] for h in heard]
        assert sorted(cells, key=repr) == sorted((h[2] for h in heard), key=repr)
        assert [h[2] for h in heard] == finished

    def test_a_failing_cell_is_named_by_scenario_and_policy_as_under_a_pool(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The model's server is not there: the third turn's compaction cannot ask it."""
        path = scenario(tmp_path / "desk.toml", "http://127.0.0.1:9/v1", llm="max_retries = 0")
        bench = ["bench", str(path), "--policy", "tiered", "--policy", "rolling-summary", "-q"]
        errors = []
        for engine in (["--engine", "ray"], ["--jobs", "2"]):
            assert 2 == main([*bench, *engine, "--no-cache"])
            errors.append(capsys.readouterr().err)

        on_ray, pooled = errors
        assert 1 == len(on_ray.splitlines())
        assert pooled == on_ray
        assert f"{path}: step " in on_ray
        assert "under rolling-summary:" in on_ray
        with pytest.raises(Rejected, match=r"under rolling-summary: .*127\.0\.0\.1:9"):
            run_cells(plan([str(path)], ["rolling-summary"]), engine=ray_engine())

    def test_workers_cache_model_answers_where_this_process_does(
        self, tmp_path: Path, chat_server: ChatServer, llm_env: Path
    ) -> None:
        path = scenario(tmp_path / "desk.toml", chat_server.url)
        bench = ["bench", str(path), "--policy", "rolling-summary:summarizer=llm", "-q"]
        assert 0 == main([*bench, "--engine", "ray", "--json", str(tmp_path / "ray.json")])
        asked = chat_server.requests

        assert 0 == main([*bench, "--engine", "ray", "--json", str(tmp_path / "again.json")])
        assert 0 == main([*bench, "--no-cache", "--json", str(tmp_path / "serial.json")])

        assert llm_env.exists()
        assert 3 == asked == chat_server.requests - 3
        (again,) = json.loads((tmp_path / "again.json").read_text("utf-8"))["results"]
        assert 3 == again["metrics"]["llm_cache_hits"]
        assert _untimed_json(tmp_path / "serial.json") == _untimed_json(tmp_path / "ray.json")

    def test_resume_runs_only_the_missing_cells_on_ray(self, tmp_path: Path) -> None:
        results = tmp_path / "sweep.jsonl"
        bench = ["bench", *SCENARIOS, "--policy", "tiered", "--policy", "sliding-window", "-q"]
        sweep = [*bench, "--results", str(results)]
        assert 0 == main([*sweep, "--jobs", "1", "--json", str(tmp_path / "whole.json")])
        lines = results.read_bytes().splitlines(keepends=True)
        results.write_bytes(b"".join(lines[:2]))

        resumed = tmp_path / "resumed.json"
        assert 0 == main([*sweep, "--resume", "--engine", "ray", "--json", str(resumed)])

        kept = results.read_bytes().splitlines(keepends=True)
        assert lines[:2] == kept[:2]
        assert len(lines) == len(kept)
        assert _untimed_json(tmp_path / "whole.json") == _untimed_json(resumed)

    @pytest.mark.parametrize(
        ("options", "reason"),
        [
            (["--address", "somewhere"], "--address 'somewhere': write auto"),
            (["--address", "ray://127.0.0.1:1"], "ray://127.0.0.1:1: no Ray cluster answers"),
            (["--address", "127.0.0.1:1"], "127.0.0.1:1: no Ray cluster answers"),
            (["--jobs", "2"], "--jobs 2: it is for --engine process"),
        ],
    )
    def test_a_bad_option_is_one_line_and_nothing_is_written(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        options: list[str],
        reason: str,
    ) -> None:
        out = tmp_path / "out.json"
        bench = ["bench", "refund-desk", "--policy", "tiered", "--json", str(out)]

        assert 2 == main([*bench, "--engine", "ray", *options])
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert reason in err
        assert not out.exists()


class TestWithoutRay:
    def test_the_engine_names_the_extra_to_install(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        monkeypatch.setitem(sys.modules, "ray", None)

        assert 2 == main(["bench", "refund-desk", "--policy", "tiered", "--engine", "ray"])
        err = capsys.readouterr().err
        assert 1 == len(err.splitlines())
        assert install_hint("ray") in err

    def test_an_address_is_for_the_ray_engine(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert 2 == main(["bench", "refund-desk", "--policy", "tiered", "--address", "auto"])
        assert "--address auto: it is for --engine ray" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 1).close()
    except OSError:
        return False
    return True


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, int]]:
    """A one-node cluster from ``ray start --head`` (in its own process group, ended by its
    id), on loopback, its workers importing this checkout; its GCS and client ports."""
    ports = {"gcs": _free_port(), "client": _free_port()}
    # A throwaway cluster on loopback, for the length of this module: no token to share.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_AUTH_MODE": "disabled"}
    command = [
        str(Path(sys.executable).parent / "ray"),
        "start",
        "--head",
        f"--port={ports['gcs']}",
        f"--ray-client-server-port={ports['client']}",
        "--node-ip-address=127.0.0.1",
        "--num-cpus=1",
        "--include-dashboard=false",
        "--disable-usage-stats",
        "--block",
    ]
    head = subprocess.Popen(
        command,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while not all(map(_listening, ports.values())):
            assert head.poll() is None, "ray start --head stopped"
            if time.monotonic() > deadline:
                pytest.fail("ray start --head never listened")
            time.sleep(0.2)
        yield ports
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            # Ray stops its processes one by one, slowly on a busy machine: the group, at once.
            head.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()


@pytest.mark.slow  # a multi-process Ray cluster, started for this class
class TestACluster:
    def test_a_sweep_sent_to_a_cluster_gives_the_serial_results(
        self, tmp_path: Path, cluster: dict[str, int]
    ) -> None:
        """By its GCS address, as from one of its nodes (``ray://``, the client server, is
        not tested: its per-client server does not start in time on a busy 2-core machine)."""
        desk = tmp_path / "desk.toml"
        desk.write_text('[compaction]\npolicy = "tiered"\nbudget = 30\n' + DESK_STEPS, "utf-8")
        bench = ["bench", str(desk), "dana-facts", "--policy", "tiered", "-q"]
        bench += ["--policy", "importance-recency-access"]
        target = f"127.0.0.1:{cluster['gcs']}"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_AUTH_MODE": "disabled"}
        out = tmp_path / "cluster.json"
        command = [sys.executable, "-m", "memtape.cli", *bench, "--engine", "ray"]
        done = subprocess.run(
            [*command, "--address", target, "--json", str(out)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

        assert 0 == done.returncode, done.stderr
        assert 0 == main([*bench, "--jobs", "1", "--json", str(tmp_path / "serial.json")])
        assert _untimed_json(tmp_path / "serial.json") == _untimed_json(out)
        assert not any(line.startswith("Traceback") for line in done.stderr.splitlines())
