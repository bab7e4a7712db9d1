"""greensched/FleetDispatch-v0: the Gymnasium API, masks, determinism, and that an episode
that acts as a built-in agent gets that agent's `greensched.multi` result exactly."""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import greensched  # noqa: E402
from greensched.envs import FleetDispatchEnv  # noqa: E402

DAYS = 1


def make(**kw):
    kw.setdefault("days", DAYS)
    return FleetDispatchEnv(**kw)


def replay(env, seed):
    """Runs an episode taking the expert's action at every step; returns (return, result)."""
    obs, info = env.reset(seed=seed)
    total, done, steps = 0.0, False, 0
    while not done:
        a = info["expert_action"]
        assert info["action_mask"].shape == (env.action_space.n,)
        obs, r, done, trunc, info = env.step(a)
        total += r
        steps += 1
    return total, info["result"], steps


@pytest.mark.parametrize("agent", ["local", "green"])
def test_replaying_an_agent_gives_its_multi_result(agent):
    env = make(expert=agent)
    total, result, steps = replay(env, 7)
    ref = greensched.multi(agent, seeds=7, days=DAYS)["summary"]
    assert steps >= result["jobs"]  # one decision per job, more for jobs chosen again
    assert result["carbon_kg"] == pytest.approx(float(ref["carbon_kg"][0]), rel=1e-12)
    assert result["energy_kwh"] == pytest.approx(float(ref["energy_kwh"][0]), rel=1e-12)
    assert result["ls_slo_violations"] == int(ref["ls_slo_violations"][0])
    assert result["jobs_moved"] == int(ref["jobs_moved"][0])
    assert result["jobs_deferred"] == int(ref["jobs_deferred"][0])
    # Honest accounting: the return is minus the measured carbon and the LS penalties.
    expected = -(result["carbon_kg"] + 10.0 * result["ls_slo_violations"])
    assert total == pytest.approx(expected, rel=1e-9)


def test_loaded_window_replay_and_return():
    env = make(load=60, warmup_days=0.5, start="2023-07-01", expert="green", ls_penalty=3.0)
    total, result, _ = replay(env, 3)
    ref = greensched.multi(
        "green", seeds=3, load=60, days=DAYS, warmup_days=0.5, start="2023-07-01"
    )["summary"]
    assert result["carbon_kg"] == pytest.approx(float(ref["carbon_kg"][0]), rel=1e-12)
    assert result["ls_slo_violations"] == int(ref["ls_slo_violations"][0])
    assert total == pytest.approx(
        -(result["carbon_kg"] + 3.0 * result["ls_slo_violations"]), rel=1e-9
    )


def test_green_differs_from_local():
    a = replay(make(expert="local"), 7)[1]["carbon_kg"]
    b = replay(make(expert="green"), 7)[1]["carbon_kg"]
    assert a != b


def test_masks_follow_the_rules():
    env = make(expert="local")
    obs, info = env.reset(seed=1)
    n, f = env.n_sites, env.n_slots
    seen_ls = seen_be = False
    for _ in range(300):
        job = env.job()
        mask = env.action_masks().reshape(n, f)
        assert mask.any()
        assert np.array_equal(mask.ravel(), info["action_mask"])
        if job["latency_sensitive"]:
            seen_ls = True
            assert not mask[:, 1:].any()  # LS: now only
        else:
            seen_be = True
            # BE: a slot k >= 1 starts at an hour boundary no later than submit + slack.
            last = job["submit_s"] + job["slack_s"]
            for k in range(1, f):
                if mask[job["home_site"], k]:
                    assert (job["now_s"] // 3600 + k) * 3600 <= last
        assert obs in env.observation_space
        valid = np.flatnonzero(mask.ravel())
        obs, r, done, _, info = env.step(int(valid[-1]))
        if done:
            break
    assert seen_ls and seen_be


def test_observation_fields():
    env = make()
    obs, _ = env.reset(seed=2)
    n, f = env.n_sites, env.n_slots
    job = env.job()
    j = obs[n * (3 + 2 * f) :]
    assert j[0] == pytest.approx(job["gpu_milli"] / 1000)
    assert j[1] == pytest.approx(job["duration_s"] / 3600, rel=1e-6)
    assert j[2] == float(job["latency_sensitive"])
    assert j[4] == pytest.approx(job["data_gb"], rel=1e-6)
    assert list(j[6 : 6 + n]).index(1.0) == job["home_site"]
    assert j[6 + n] ** 2 + j[7 + n] ** 2 == pytest.approx(1.0, abs=1e-5)
    for s in range(n):
        carbon = obs[s * (3 + 2 * f) + 3 : s * (3 + 2 * f) + 3 + f]
        assert (carbon > 0).all() and (carbon < 2).all()  # kg/kWh


def test_seeded_and_deterministic():
    def run(seed):
        env = make()
        env.action_space.seed(5)
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        out, done = [obs], False
        while not done:
            valid = np.flatnonzero(info["action_mask"])
            obs, r, done, _, info = env.step(int(rng.choice(valid)))
            out.append(obs)
            out.append(np.float32(r))
        return np.concatenate([np.atleast_1d(x) for x in out]), info["result"]

    a, ra = run(11)
    b, rb = run(11)
    c, _ = run(12)
    assert np.array_equal(a, b) and ra == rb
    assert a.shape != c.shape or not np.array_equal(a, c)


def test_check_env_and_make():
    from gymnasium.utils.env_checker import check_env

    env = gym.make("greensched/FleetDispatch-v0", days=DAYS)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape


def test_sync_vector_env():
    envs = gym.vector.SyncVectorEnv([lambda: make() for _ in range(2)])
    obs, info = envs.reset(seed=[1, 2])
    assert obs.shape == (2, envs.single_observation_space.shape[0])
    for _ in range(20):
        masks = info["action_mask"]
        actions = [int(np.flatnonzero(m)[0]) for m in masks]
        obs, r, term, trunc, info = envs.step(actions)
        assert r.shape == (2,)
    envs.close()


def test_cost_reward_and_bad_arguments():
    with pytest.raises(greensched.Error):
        FleetDispatchEnv(reward="joules")
    with pytest.raises(greensched.Error):
        FleetDispatchEnv(expert="nobody")
    env = make(reward="cost")
    env.reset(seed=1)
    with pytest.raises(greensched.Error):
        env.step(env.action_space.n)
    assert math.isfinite(env.step(0)[1])


REPO = pathlib.Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"


@pytest.mark.parametrize("start", ["2023-01-01", "2023-07-01"])
def test_four_regions_season_replays_green(start):
    """The 4-region fleet on real carbon series with the openb default pod list, at a stated
    load in a seasonal window: replaying green gives green's `greensched.multi` result."""
    pods = SHARED / "openb" / "openb_pod_list_default.csv"
    if not pods.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {pods} is missing")
        pytest.skip(f"{pods} is missing (../shared/data)")
    args = dict(fleet=REPO / "examples" / "fleet-4-regions.json", data_dir=SHARED, pods=pods)
    env = make(load=70, warmup_days=0.25, start=start, expert="green", **args)
    total, result, _ = replay(env, 42)
    ref = greensched.multi(
        "green", seeds=42, load=70, days=DAYS, warmup_days=0.25, start=start, **args
    )["summary"]
    assert result["carbon_kg"] == pytest.approx(float(ref["carbon_kg"][0]), rel=1e-12)
    assert result["energy_kwh"] == pytest.approx(float(ref["energy_kwh"][0]), rel=1e-12)
    assert result["ls_slo_violations"] == int(ref["ls_slo_violations"][0])
    assert total == pytest.approx(-(result["carbon_kg"] + 10.0 * result["ls_slo_violations"]))


def test_learned_forecasts_replay_as_multi_and_the_command_line(cli, tmp_path):
    """forecast="learned": the observation's forecasts are the learned ones (the same-hour ones
    in the warm-up, which the models were trained on; others in the window), replaying green on
    them gives `greensched.multi(..., forecast="learned")`'s result,
    and that is the command line's `--forecast learned` row."""
    pods = SHARED / "openb" / "openb_pod_list_default.csv"
    if not pods.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {pods} is missing")
        pytest.skip(f"{pods} is missing (../shared/data)")
    fleet = REPO / "examples" / "fleet-4-regions.json"
    args = dict(fleet=fleet, data_dir=SHARED, pods=pods)
    run = dict(load=70, warmup_days=0.25, start="2023-07-01")
    learned = make(expert="green", forecast="learned", **run, **args)
    same_hour = make(expert="green", **run, **args)
    # Both take the learned env's expert actions: the states stay the same, the forecasts not.
    obs, info = learned.reset(seed=42)
    assert np.array_equal(obs, same_hour.reset(seed=42)[0])  # the warm-up's first job
    done, differ = False, False
    while not done and not differ:
        a = info["expert_action"]
        obs, _, done, _, info = learned.step(a)
        differ = not np.array_equal(obs, same_hour.step(a)[0])
    assert differ
    total, result, _ = replay(learned, 42)
    ref = greensched.multi("green", seeds=42, days=DAYS, forecast="learned", **run, **args)[
        "summary"
    ]
    assert str(ref["agent"][0]) == "green (learned)"
    assert result["carbon_kg"] == pytest.approx(float(ref["carbon_kg"][0]), rel=1e-12)
    assert result["ls_slo_violations"] == int(ref["ls_slo_violations"][0])
    plain = greensched.multi("green", seeds=42, days=DAYS, **run, **args)["summary"]
    assert float(plain["carbon_kg"][0]) != float(ref["carbon_kg"][0])
    out = subprocess.run(
        [
            cli,
            "multi",
            "--fleet",
            str(fleet),
            "--data-dir",
            str(SHARED),
            "--pods",
            str(pods),
            "--load",
            "70",
            "--warmup-days",
            "0.25",
            "--start",
            "2023-07-01",
            "--days",
            str(DAYS),
            "--agent",
            "green",
            "--seeds",
            "42",
            "--forecast",
            "learned",
            "--no-bound",
            "--json",
            "-q",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    row = next(r for r in json.loads(out) if r["agent"] == "green (learned)")
    assert row["carbon_kg"] == pytest.approx(float(ref["carbon_kg"][0]), rel=1e-9)
    with pytest.raises(greensched.Error):
        FleetDispatchEnv(forecast="tomorrow")
    with pytest.raises(greensched.Error):
        greensched.multi("green", seeds=42, days=DAYS, forecast="tomorrow")


def test_ls_home_and_room_masks():
    """ls_home leaves an LS job only "now at home"; room only narrows the mask (never to
    nothing) and always allows green's own choice, so replaying green under it is green."""
    busy = dict(expert="green", load=90, warmup_days=0.25)  # sites fill up
    plain = make(**busy)
    ls_home = make(ls_home=True, **busy)
    room = make(room=True, **busy)
    infos = [e.reset(seed=5)[1] for e in (plain, ls_home, room)]
    n, f = plain.n_sites, plain.n_slots
    narrowed = ls_jobs = 0
    while True:
        job = plain.job()
        m0, m1, m2 = (i["action_mask"] for i in infos)
        if job["latency_sensitive"]:
            ls_jobs += 1
            want = np.zeros(n * f, dtype=bool)
            want[job["home_site"] * f] = True
            np.testing.assert_array_equal(m1, want)
        else:
            np.testing.assert_array_equal(m1, m0)
        assert m2.any() and not (m2 & ~m0).any()
        narrowed += int((m2 != m0).any())
        a = infos[0]["expert_action"]
        assert m2[a], f"green's action {a} is outside the room mask"
        steps = [e.step(a) for e in (plain, ls_home, room)]
        infos = [s[4] for s in steps]
        if steps[0][2] or (narrowed >= 20 and ls_jobs >= 20):
            break
    assert ls_jobs >= 20 and narrowed >= 20


def test_dispatch_carbon_reward():
    """Charged at dispatch: every step costs the job's expected carbon (> 0 for a job that
    runs), the run itself is the same as under the measured reward, and it is deterministic."""
    runs = []
    for reward in ("carbon", "dispatch-carbon", "dispatch-carbon"):
        env = make(expert="local", reward=reward)
        obs, info = env.reset(seed=2)
        rewards, done = [], False
        while not done:
            obs, r, done, _, info = env.step(info["expert_action"])
            rewards.append(r)
        runs.append((np.array(rewards), info["result"]))
    (measured, r0), (charged, r1), (again, _) = runs
    np.testing.assert_array_equal(charged, again)
    assert r1["carbon_kg"] == r0["carbon_kg"] and r1["jobs"] == r0["jobs"]
    assert np.all(charged <= 0) and np.mean(charged < 0) > 0.99
    # Measured: most decisions see no carbon since the previous one (same instant); charged:
    # each job its own.
    assert np.count_nonzero(charged) > np.count_nonzero(measured)
    assert r1["total_reward"] == pytest.approx(charged.sum(), rel=1e-9)
