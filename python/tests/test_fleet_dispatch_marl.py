"""The PettingZoo parallel version of FleetDispatch-v0: the API test, and that bids decide."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

import greensched  # noqa: E402,F401
from greensched.envs.fleet_marl import parallel_env  # noqa: E402


def test_parallel_api():
    from pettingzoo.test import parallel_api_test

    parallel_api_test(parallel_env(days=1), num_cycles=200)


def test_home_bids_only_is_local():
    """Only the home site bids slot 0 for every job: the run is the `local` agent's."""
    env = parallel_env(days=1, expert="local")
    obs, infos = env.reset(seed=4)
    total, done = 0.0, False
    while not done:
        home = env.env.job()["home_site"]
        assert env.env.expert_action() == home * env.env.n_slots
        actions = {a: (1 if i == home else 0) for i, a in enumerate(env.possible_agents)}
        obs, rewards, terms, truncs, infos = env.step(actions)
        total += rewards[env.possible_agents[0]]
        done = all(terms.values())
    result = infos[env.possible_agents[0]]["result"]
    ref = greensched.multi("local", seeds=4, days=1)["summary"]
    assert result["carbon_kg"] == pytest.approx(float(ref["carbon_kg"][0]), rel=1e-12)
    assert total == pytest.approx(-(result["carbon_kg"] + 10 * result["ls_slo_violations"]))
    assert env.agents == []


def test_lowest_carbon_bid_wins():
    env = parallel_env(days=1)
    obs, infos = env.reset(seed=5)
    n, f = env.env.n_sites, env.env.n_slots
    # Every site that may take it bids slot 0: the lowest forecast carbon now wins.
    bids = {a: (1 if infos[a]["action_mask"][1] else 0) for a in env.possible_agents}
    o = obs[env.possible_agents[0]]
    bidders = [i for i, a in enumerate(env.possible_agents) if bids[a]]
    carbon = {i: o[i * (3 + 2 * f) + 3] for i in bidders}
    want = min(bidders, key=lambda i: (carbon[i], i != env.env.job()["home_site"], i))
    assert env._dispatch(bids) == want * f
    assert np.all([infos[a]["action_mask"][0] for a in env.possible_agents])
