#!/usr/bin/env bash
# bench/soak_faults.sh: the soak of bench/soak.sh (10,000 mixed calls from
# 8 sessions, random emulator faults) run again through the fault proxy
# (emulator/fault_proxy.py) while a second injector breaks the network
# with one of these, then 0.4 s of clean network, and again:
#   latency 100 +- 25 ms each way (200 +- 50 ms RTT) for 1 s,
#   a bandwidth limit of 20 kB/s each way for 1 s,
#   a stall (partition) of 300 ms that heals,
#   an RST to every live connection,
#   the next request dropped half-open (never answered, never closed),
# the database's statement_timeout (500 ms) ending what the faults hold.
# Same figures and verdict as bench/soak.sh: each backend's VmRSS and
# non-relation file descriptors from its call ~1k to ~10k, flat within
# 5 %, and crashed backends; plus what the network injector did.
#
# Benchmark-style, not part of CI: as root, after lancelsm is installed
# (scripts/demo.sh).  Bounded: SOAK_TIMEOUT seconds for pgbench (default
# 900), the proxy's --max-lifetime 120 s beyond that.  Exit status as
# bench/soak.sh's.
#
# Run directly, it runs bench/soak.sh with SOAK_NETWORK_FAULTS=1; soak.sh
# then sources this file for soak_faults_start and soak_faults_report.

# soak_faults_start WORK EMULATOR_PORT: start the proxy in front of the
# emulator and the network injector (both stop when WORK/stop exists or
# their bound runs out); sets soak_server_port, the port lancelsm is to use.
soak_faults_start() {
	local work=$1 emu_port=$2 root
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	python3 "$root/emulator/fault_proxy.py" --target "127.0.0.1:$emu_port" \
		--port-file "$work/proxy.port" --control-port-file "$work/proxy.cport" \
		--max-lifetime $((${SOAK_TIMEOUT:-900} + 120)) --seed 15 \
		>"$work/proxy.log" 2>&1 &
	echo $! >"$work/net-proxy.pid"
	for _ in $(seq 100); do [ -s "$work/proxy.port" ] && break; sleep 0.05; done
	[ -s "$work/proxy.port" ] || { echo "soak: the fault proxy did not start" >&2; return 1; }
	python3 - "$(cat "$work/proxy.cport")" "$work/stop" \
		>"$work/net-injector.out" 2>"$work/net-injector.err" <<'PY' &
import collections, json, os, random, sys, time, urllib.request
cport, stop = sys.argv[1], sys.argv[2]
random.seed(15)

def px(path, body=None):
    req = urllib.request.Request("http://127.0.0.1:%s/_proxy/%s" % (cport, path),
                                 data=json.dumps(body or {}).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    urllib.request.urlopen(req, timeout=5).read()

faults = {
    "latency": lambda: px("direction", {"latency_ms": 100, "jitter_ms": 25}),
    "bandwidth": lambda: px("direction", {"bytes_per_sec": 20000}),
    "stall": lambda: px("stall", {"ms": 300}),
    "reset": lambda: px("reset", {"side": "client"}),
    "half_open": lambda: px("arm", {"match": "POST /v1/table/", "action": "half_open"}),
}
done = collections.Counter()
totals = collections.Counter()
while not os.path.exists(stop):
    name = random.choice(sorted(faults))
    try:
        faults[name]()
        done[name] += 1
        time.sleep(1.0 if name in ("latency", "bandwidth") else 0.4)
        # the proxy's counters, before clear zeroes them
        with urllib.request.urlopen("http://127.0.0.1:%s/_proxy/state" % cport,
                                    timeout=5) as r:
            totals.update(json.load(r)["counts"])
        px("clear")
        time.sleep(0.4)    # a clean network between two faults
    except Exception as e:
        print("net-injector:", e, file=sys.stderr)
        time.sleep(0.4)
print(json.dumps({"faults": done, "proxy": totals}, sort_keys=True))
PY
	echo $! >"$work/net-injector.pid"
	soak_server_port=$(cat "$work/proxy.port")
}

# soak_faults_report WORK: what the network injector did (once it stopped).
soak_faults_report() {
	local work=$1
	wait "$(cat "$work/net-injector.pid")" 2>/dev/null
	echo "soak: network faults and proxy counts: $(cat "$work/net-injector.out")"
	[ -s "$work/net-injector.err" ] && head -3 "$work/net-injector.err"
	return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	SOAK_NETWORK_FAULTS=1 exec bash "$(dirname "$0")/soak.sh"
fi
