#!/usr/bin/env bash
# scripts/deps.sh [demo]
# Installs what lancelsm needs on Debian 12 (as root).  "demo": only what
# scripts/demo.sh needs to build lancelsm and run it preloaded with pg_cron
# against the emulator: PostgreSQL 15, its server headers, pg_cron,
# libcurl, jansson, the compiler, curl and python3.  Without an argument,
# what the test command needs as well:
# PostgreSQL 15 here, and mmdebstrap + zstd for the chroots in which
# scripts/pg-chroot.sh brings the newer majors; sqlsmith for
# scripts/sqlsmith.sh; nginx and squid for the TLS edge and proxy tests
# (t/net_tls_edge.pl, t/net_proxy.pl), which start their own instances;
# prometheus (promtool tests contrib/prometheus's rules) and
# prometheus-postgres-exporter, both of which test/monitoring/run.sh
# starts itself: the packages' own services must never run; dnsmasq for
# the DNS server of the name tests (scripts/with-names.sh starts its own):
# dnsmasq-base, the program alone, which has no service to start.
# Only packages not installed yet are installed (they are named), and
# none is upgraded.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
	echo "scripts/deps.sh: run as root (it calls apt-get)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# wait for another apt-get on this machine instead of failing at once
apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
updated=0
# install_missing PACKAGE...: installs those of the packages that are not
# installed, and says which; never upgrades one that is (an installed
# PostgreSQL server stays at its version)
install_missing() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$' ||
			missing+=("$p")
	done
	if [ ${#missing[@]} = 0 ]; then
		echo "scripts/deps.sh: $# packages installed already, none upgraded"
		return 0
	fi
	echo "scripts/deps.sh: installing ${missing[*]} ($(($# - ${#missing[@]})) of $# installed already, none upgraded)"
	[ $updated = 1 ] || { apt_get update -qq; updated=1; }
	apt_get install -y -qq --no-upgrade --no-install-recommends "${missing[@]}" >/dev/null
}
demo_packages=(postgresql-15 postgresql-server-dev-15 postgresql-common postgresql-15-cron
	libcurl4-openssl-dev libjansson-dev pkg-config make gcc curl python3 ca-certificates)
if [ "${1:-}" = demo ]; then
	install_missing "${demo_packages[@]}"
	exit 0
fi
[ $# = 0 ] || { echo "usage: scripts/deps.sh [demo]" >&2; exit 2; }
install_missing "${demo_packages[@]}" \
	libipc-run-perl openssl mmdebstrap zstd sqlsmith dnsmasq-base
command -v node >/dev/null || install_missing nodejs npm
# nginx, squid, prometheus and prometheus-postgres-exporter: installed
# with their services kept from starting (a policy-rc.d for the duration,
# unless one is there already; Debian's postinst would start nginx on
# *:80, squid on *:3128, prometheus on *:9090 and the exporter on *:9187),
# and disabled where systemd runs, so that nothing of theirs listens after
# this
if ! command -v nginx >/dev/null || ! command -v squid >/dev/null ||
	! command -v promtool >/dev/null ||
	! command -v prometheus-postgres-exporter >/dev/null; then
	policy=/usr/sbin/policy-rc.d
	own_policy=0
	if [ ! -e $policy ]; then
		printf '#!/bin/sh\nexit 101\n' >$policy && chmod 755 $policy && own_policy=1
	fi
	rc=0
	install_missing nginx squid prometheus prometheus-postgres-exporter || rc=$?
	if [ $own_policy = 1 ]; then rm -f $policy; fi
	[ $rc = 0 ] || exit $rc
	if [ -d /run/systemd/system ]; then
		systemctl disable --now nginx squid prometheus \
			prometheus-postgres-exporter >/dev/null 2>&1 || true
	fi
fi
