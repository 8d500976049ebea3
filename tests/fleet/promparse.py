# SPDX-License-Identifier: GPL-2.0
"""Parse "maglev-fleet prom" output (stdin) with prometheus_client's text
parser and check its values against the /proc file it came from (argv[1]).
Prints "N families, N samples" and exits 0, or raises."""
import sys

from prometheus_client.parser import text_string_to_metric_families

SVC_FIELDS = {
    "ip_vs_maglev_table_slots": "size", "ip_vs_maglev_dests": "dests",
    "ip_vs_maglev_builds_total": "builds",
    "ip_vs_maglev_last_build_churn_slots": "churn",
    "ip_vs_maglev_alloc_failures_total": "alloc_fail",
    "ip_vs_maglev_build_failures_total": "build_fail",
    "ip_vs_maglev_pending": "pending",
    "ip_vs_maglev_config_generation": "gen",
    "ip_vs_maglev_table_generation": "table_gen",
    "ip_vs_maglev_service_memory_bytes": "mem",
    "ip_vs_maglev_table_shared_services": "shared",
    "ip_vs_maglev_shared_table_memory_bytes": "table_mem",
}
NS_FIELDS = {
    "ip_vs_maglev_tables": "tables",
    "ip_vs_maglev_table_fills_total": "fills",
    "ip_vs_maglev_table_found_total": "found",
    "ip_vs_maglev_memory_bytes": "mem",
}

svc, dest, ns, mod = {}, {}, {}, {}
cur = None
for line in open(sys.argv[1]):
    w = line.split()
    if not w or w[0].startswith("#"):
        continue
    if w[0] == "module":
        mod = dict(zip(w[2::2], w[3::2]), module=w[1])
    elif w[0] == "namespace":
        ns = dict(zip(w[1::2], w[2::2]))
    elif w[0] == "service":
        cur = w[1] + " " + w[2]
        svc[cur] = dict(zip(w[3::2], w[4::2]))
    elif w[0] == "dest":
        dest[(cur, w[1])] = dict(zip(w[2::2], w[3::2]))
    else:
        raise AssertionError("unexpected line %r" % (line,))

fams = list(text_string_to_metric_families(sys.stdin.read()))
names = [f.name for f in fams]
assert len(names) == len(set(names)), "a family twice"
n = 0
samples = set()
for f in fams:
    for s in f.samples:
        n += 1
        samples.add(s.name)
        lab = s.labels
        if s.name == "ip_vs_maglev_services":
            assert s.value == len(svc), s
            continue
        if s.name == "ip_vs_maglev_module_info":
            assert s.value == 1 and mod and lab == {
                "module": mod["module"], "version": mod["version"],
                "bits": mod["bits"]}, s
            continue
        if s.name == "ip_vs_maglev_proc_present":
            assert s.value == (0 if mod.get("proc") == "missing" else 1), s
            continue
        if s.name in NS_FIELDS:
            assert s.value == int(ns[NS_FIELDS[s.name]]), s
            continue
        fields = svc[lab["service"]]
        if s.name in SVC_FIELDS:
            assert s.value == int(fields[SVC_FIELDS[s.name]]), s
        elif s.name == "ip_vs_maglev_flags":
            assert s.value == int(fields["flags"], 16), s
        elif s.name == "ip_vs_maglev_last_build_duration_seconds":
            assert abs(s.value - int(fields["build_ns"]) / 1e9) < 1e-12, s
        elif s.name == "ip_vs_maglev_dest_weight":
            assert s.value == int(dest[(lab["service"], lab["dest"])]["weight"]), s
        elif s.name == "ip_vs_maglev_dest_drain_weight":
            assert s.value == int(dest[(lab["service"], lab["dest"])]["drain"]), s
        elif s.name == "ip_vs_maglev_dest_slots":
            assert s.value == int(dest[(lab["service"], lab["dest"])]["slots"]), s
        elif s.name == "ip_vs_maglev_table_info":
            assert s.value == 1 and lab["digest"] == fields["digest"], s
            key = fields.get("key", "seed:" + fields.get("seed", "?"))
            assert lab["key"] == key, s
        else:
            raise AssertionError("unexpected sample %s" % (s,))
for name, fields in svc.items():
    total = sum(int(d["slots"]) for (sv, _), d in dest.items() if sv == name)
    assert total in (0, int(fields["size"])), (name, total)
assert ("ip_vs_maglev_module_info" in samples) == bool(mod), "module line"
assert "ip_vs_maglev_proc_present" in samples
for (sv, name), d in dest.items():
    assert ("drain" in d) <= ("ip_vs_maglev_dest_drain_weight" in samples)
for metric, f in NS_FIELDS.items():
    if f in ns:
        assert metric in samples, ("namespace field not exported", f)
print("%d families, %d samples" % (len(fams), n))
