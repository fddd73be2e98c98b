"""dcnsim: a fast, deterministic packet-level datacenter network simulator.

    import dcnsim
    r = dcnsim.run("spec.toml")        # or a dict, or TOML text
    r.flows, r.queues, r.switches      # pandas DataFrames (built when first read)
    r.trace, r.flow_state              # with a [trace] table: packets hop by hop, control state
    r.summary                          # aggregates and provenance
    r.save("out/")                     # Parquet tables, summary.json, slowdown.png
    r.save("out/", plot=False)         # the same without the plot: no pandas or matplotlib imported

A bad spec raises dcnsim.SpecError (a ValueError) whose `field` names the offending key.
"""

from ._core import __version__
from .errors import SimulationError, SpecError
from .result import Result
from .spec import describe, load_spec, resolve, run
from .sweep import load_flows as sweep_flows
from .sweep import results, sweep

__all__ = ["run", "resolve", "sweep", "results", "sweep_flows", "load_spec", "describe", "Result", "SpecError",
           "SimulationError", "__version__"]
