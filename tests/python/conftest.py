import textwrap

import pytest

SMALL = textwrap.dedent(
    """
    name = "tiny"
    seed = 7
    duration_us = 3000.0
    [measure]
    warmup_us = 500.0
    [topology]
    kind = "leaf_spine"
    racks = 2
    hosts_per_rack = 4
    spines = 2
    host_rate_gbps = 10.0
    core_rate_gbps = 20.0
    [queue]
    limit_packets = 200
    ecn = "step"
    ecn_k_packets = 30
    [transport]
    protocol = "dctcp"
    [[workload]]
    kind = "poisson"
    load = 0.5
    cdf = "fb_hadoop"
    """
)


@pytest.fixture
def small_toml():
    return SMALL


@pytest.fixture
def small_spec():
    import tomllib

    return tomllib.loads(SMALL)
