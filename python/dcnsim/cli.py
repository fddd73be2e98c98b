"""The `dcnsim` command: run a spec, describe the parameters, run the demo."""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path

from .errors import SpecError


def _fmt(x, digits=3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}g}" if abs(x) < 1e4 else f"{x:,.0f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def format_summary(s: dict) -> str:
    """A compact, human-readable table of a run's summary."""
    f = s["flows"]
    q = s["queues"]
    sd = s["slowdown"]
    rows = [
        ("run", f"{s.get('name') or '-'}  ({s['protocol']}, seed {s['seed']}, dcnsim {s['version']})"),
        ("hosts", f"{s['hosts']} x {_fmt(s['host_rate_gbps'])} Gb/s, base RTT {s['base_rtt_ps'] / 1e6:.2f} us, BDP {_fmt(s['bdp_bytes'])} B"),
        ("simulated", f"{s['sim_end_ps'] / 1e9:.3f} ms (window from {s['window_start_ps'] / 1e9:.3f} ms)"),
        ("flows", f"{_fmt(f['started'])} started, {_fmt(f['finished'])} finished, {_fmt(f['counted_finished'])} counted"),
        ("goodput", f"{_fmt(s['goodput_gbps'])} Gb/s total, {_fmt(s['goodput_per_host_gbps'])} Gb/s per host "
                    f"({_fmt(s['goodput_normalized'])} of capacity; offered {_fmt(s['offered_load_gbps'])} Gb/s)"),
        ("slowdown", f"median {_fmt(sd['median'])}, p99 {_fmt(sd['p99'])}, mean {_fmt(sd['mean'])} over {_fmt(sd['count'])} flows"),
    ]
    for g in s["slowdown_by_size"]:
        rows.append((f"  {g['group']} {g['label']}", f"median {_fmt(g['median'])}, p99 {_fmt(g['p99'])} ({_fmt(g['count'])} flows)"))
    rows += [
        ("max switch queue", f"{_fmt(q['max_switch_bytes'])} B (by tier: "
                             + ", ".join(f"{k} {_fmt(v)}" for k, v in q["max_switch_bytes_by_tier"].items()) + ")"),
        ("drops / marks / trims", f"{_fmt(q['drops'])} / {_fmt(q['ecn_marks'])} / {_fmt(q['trims'])}"),
        ("transport", ", ".join(f"{k} {_fmt(v)}" for k, v in s["transport"].items()) or "-"),
        ("events", f"{_fmt(s['events'])} in {s['wall_time_s']:.2f} s wall ({s['events_per_sec'] / 1e6:.2f} M events/s)"),
    ]
    w = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)


def _describe_text(d: dict) -> str:
    out = [f"dcnsim {d['version']}", ""]
    for title, key in (("Protocols", "protocols"), ("Topologies", "topologies"), ("Workloads", "workloads")):
        out.append(f"{title}:")
        out += [f"  {x['name']:<16} {x['summary']}" for x in d[key]]
        out.append("")
    out.append("Shipped flow-size CDFs: " + ", ".join(d["cdfs"]))
    out.append("")
    out.append("Parameters (key, type, unit, default; [kinds] says which kinds read it):")
    section = None
    for p in d["params"]:
        top = p["path"].split(".")[0] if "." in p["path"] else "(top level)"
        if top != section:
            section = top
            out.append(f"\n[{section}]")
        default = "required" if p["default"] is None else f"default {p['default']}"
        unit = f" ({p['unit']})" if p["unit"] else ""
        out.append(f"  {p['path']:<38} {p['type']}{unit}, {default}")
        if p["doc"]:
            out.append(f"      {p['doc']}")
    return "\n".join(out)


def _parse_value(text: str):
    from .spec import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except Exception:
        return text


def _run(spec_path, out, quiet: bool, sets) -> int:
    from .spec import load_spec, run, set_path

    spec = load_spec(spec_path)
    for item in sets or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SpecError(item, "--set needs key=value")
        set_path(spec, key.strip(), _parse_value(value.strip()))
    result = run(spec, progress=not quiet)
    if out is not None:
        result.save(out)
    if not quiet:
        print(format_summary(result.summary))
        if out is not None:
            print(f"\nwrote {Path(out) / 'flows.parquet'}, queues.parquet, switches.parquet, summary.json, slowdown.png")
    return 0


def demo_spec_path() -> Path:
    return Path(str(resources.files("dcnsim") / "specs" / "demo.toml"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="dcnsim", description="Packet-level datacenter network simulator.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a spec file")
    r.add_argument("spec", help="TOML spec file")
    r.add_argument("--out", help="write flows.parquet, queues.parquet, switches.parquet, summary.json, slowdown.png here")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a spec key, e.g. workload[0].load=0.7")
    r.add_argument("--quiet", action="store_true", help="no progress and no summary table")
    d = sub.add_parser("describe", help="list protocols, topologies, workloads and every parameter")
    d.add_argument("--json", action="store_true", help="machine-readable output")
    m = sub.add_parser("demo", help="run the demo scenario (DCTCP on a leaf-spine, websearch at 50% load)")
    m.add_argument("--out", default="out/demo")
    m.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "describe":
            from .spec import describe

            desc = describe()
            print(json.dumps(desc, indent=2) if args.json else _describe_text(desc))
            return 0
        if args.cmd == "demo":
            return _run(demo_spec_path(), args.out, args.quiet, [])
        return _run(args.spec, args.out, args.quiet, args.set)
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
