#!/usr/bin/env bash
# Installs what lancelsm needs to build, test and demo on Debian 12 (as root):
# PostgreSQL 15 here, and mmdebstrap + zstd for the chroots in which
# scripts/pg-chroot.sh brings the newer majors; sqlsmith for
# scripts/sqlsmith.sh.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
	echo "scripts/deps.sh: run as root (it calls apt-get)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# wait for another apt-get on this machine instead of failing at once
apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
apt_get update -qq
apt_get install -y -qq --no-install-recommends \
	postgresql-15 postgresql-server-dev-15 postgresql-common postgresql-15-cron \
	libcurl4-openssl-dev libjansson-dev pkg-config make gcc \
	libipc-run-perl curl openssl python3 ca-certificates \
	mmdebstrap zstd sqlsmith >/dev/null
command -v node >/dev/null || apt_get install -y -qq nodejs npm >/dev/null
