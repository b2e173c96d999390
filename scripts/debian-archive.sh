#!/usr/bin/env bash
# scripts/debian-archive.sh
#	Prints the URI of the Debian archive this machine's apt uses, for the
#	chroots and header extractions that fetch other Debian suites
#	(scripts/pg-chroot.sh, scripts/check-old-curl.sh): the archive is
#	whatever /etc/apt/sources.list and /etc/apt/sources.list.d/ (one-line
#	*.list or deb822 *.sources) name, a local mirror included.
#	LANCELSM_DEBIAN_MIRROR, when set, is printed instead.
#
#	The entries are read through apt itself (apt-get indextargets): the
#	"deb" entry whose Release file says Label "Debian" (not the security
#	archive's "Debian-Security"), or, before the first apt-get update has
#	fetched the Release files, the first "deb" entry of a plain suite (no
#	"-updates", "-security" or "-backports") with component main.  Exits
#	1, saying why, when there is none.
set -euo pipefail
if [ -n "${LANCELSM_DEBIAN_MIRROR:-}" ]; then
	echo "$LANCELSM_DEBIAN_MIRROR"
	exit 0
fi
targets=$(apt-get indextargets --format '$(TARGET_OF) $(REPO_URI) $(RELEASE) $(COMPONENT) $(LABEL)' 2>/dev/null |
	awk '$1 == "deb"' | sort -u) || true
uri=$(awk '$5 == "Debian" { print $2; exit }' <<<"$targets")
[ -n "$uri" ] ||
	uri=$(awk '$4 == "main" && $3 !~ /-/ { print $2; exit }' <<<"$targets")
if [ -z "$uri" ]; then
	echo "scripts/debian-archive.sh: no Debian archive in this machine's apt sources; set LANCELSM_DEBIAN_MIRROR" >&2
	exit 1
fi
echo "${uri%/}"
