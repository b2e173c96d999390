#!/usr/bin/env bash
# Proves that lancelsm builds against an older libcurl than the system's:
# compiles every curl-using source file (-fsyntax-only, -Werror) against
# the headers of Debian 11 (bullseye)'s libcurl4-openssl-dev, 7.74.0, older
# than the 7.85.0 that brought CURLOPT_PROTOCOLS_STR, and checks that the
# CURLOPT_PROTOCOLS fallback is what got compiled.  Also checks that every
# libcurl symbol the sources use is in the table below, whose newest entry
# must be the minimum that src/net/http.c enforces and docs/install.md states.
#
# The headers are extracted once with mmdebstrap (installed when missing)
# into /var/cache/lancelsm/curl-bullseye, from the archive of this
# machine's apt sources (scripts/debian-archive.sh; LANCELSM_DEBIAN_MIRROR
# overrides); later runs take about a second.
# Run as root on Debian 12, after scripts/deps.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=/var/cache/lancelsm/curl-bullseye
[ "$(id -u)" = 0 ] || { echo "scripts/check-old-curl.sh: run as root" >&2; exit 1; }

# libcurl symbol -> first libcurl version providing it (curl's
# docs/libcurl/symbols-in-versions)
symbols='
CURLE_BAD_CONTENT_ENCODING 7.10
CURLE_COULDNT_CONNECT 7.1
CURLE_COULDNT_RESOLVE_HOST 7.1
CURLE_FILESIZE_EXCEEDED 7.10.8
CURLE_HTTP2 7.38.0
CURLE_HTTP2_STREAM 7.49.0
CURLE_OK 7.1
CURLE_OPERATION_TIMEDOUT 7.10.2
CURLE_OUT_OF_MEMORY 7.1
CURLE_PEER_FAILED_VERIFICATION 7.17.1
CURLE_SEND_ERROR 7.13.0
CURLE_SSL_CACERT_BADFILE 7.16.0
CURLE_SSL_CERTPROBLEM 7.10
CURLE_SSL_CIPHER 7.10
CURLE_SSL_CONNECT_ERROR 7.1
CURLE_SSL_ISSUER_ERROR 7.19.0
CURLE_UNSUPPORTED_PROTOCOL 7.1
CURLE_URL_MALFORMAT 7.1
CURLE_WEIRD_SERVER_REPLY 7.51.0
CURLE_WRITE_ERROR 7.1
CURLINFO_HTTP_CONNECTCODE 7.10.7
CURLINFO_HTTP_VERSION 7.50.0
CURLINFO_PRIVATE 7.10.3
CURLINFO_REQUEST_SIZE 7.4.1
CURLINFO_RESPONSE_CODE 7.10.8
CURLMOPT_MAXCONNECTS 7.16.3
CURLMOPT_MAX_HOST_CONNECTIONS 7.30.0
CURLMOPT_MAX_TOTAL_CONNECTIONS 7.30.0
CURLMOPT_PIPELINING 7.16.0
CURLMOPT_SOCKETDATA 7.15.4
CURLMOPT_SOCKETFUNCTION 7.15.4
CURLMOPT_TIMERDATA 7.16.0
CURLMOPT_TIMERFUNCTION 7.16.0
CURLMSG_DONE 7.9.6
CURLM_OK 7.9.6
CURLOPT_CAINFO 7.4.2
CURLOPT_CLOSESOCKETDATA 7.21.7
CURLOPT_CLOSESOCKETFUNCTION 7.21.7
CURLOPT_CONNECTTIMEOUT_MS 7.16.2
CURLOPT_DNS_CACHE_TIMEOUT 7.9.3
CURLOPT_ERRORBUFFER 7.1
CURLOPT_FOLLOWLOCATION 7.1
CURLOPT_FRESH_CONNECT 7.7
CURLOPT_HEADERDATA 7.10
CURLOPT_HEADERFUNCTION 7.7.2
CURLOPT_HTTPHEADER 7.1
CURLOPT_HTTPPROXYTUNNEL 7.3
CURLOPT_HTTP_VERSION 7.9.1
CURLOPT_LOW_SPEED_LIMIT 7.1
CURLOPT_LOW_SPEED_TIME 7.1
CURLOPT_MAXFILESIZE_LARGE 7.11.0
CURLOPT_NOPROXY 7.19.4
CURLOPT_NOSIGNAL 7.10
CURLOPT_OPENSOCKETDATA 7.17.1
CURLOPT_OPENSOCKETFUNCTION 7.17.1
CURLOPT_PATH_AS_IS 7.42.0
CURLOPT_PIPEWAIT 7.43.0
CURLOPT_POST 7.1
CURLOPT_POSTFIELDS 7.1
CURLOPT_POSTFIELDSIZE 7.2
CURLOPT_PRIVATE 7.10.3
CURLOPT_PROTOCOLS 7.19.4
CURLOPT_PROXY 7.1
CURLOPT_PROXYAUTH 7.10.7
CURLOPT_PROXYPASSWORD 7.19.1
CURLOPT_PROXYTYPE 7.10
CURLOPT_PROXYUSERNAME 7.19.1
CURLOPT_REDIR_PROTOCOLS 7.19.4
CURLOPT_RESOLVE 7.21.3
CURLOPT_SSLCERT 7.1
CURLOPT_SSLKEY 7.9.3
CURLOPT_SSLVERSION 7.1
CURLOPT_SSL_VERIFYHOST 7.8.1
CURLOPT_SSL_VERIFYPEER 7.4.2
CURLOPT_TCP_KEEPALIVE 7.25.0
CURLOPT_TCP_KEEPIDLE 7.25.0
CURLOPT_TCP_KEEPINTVL 7.25.0
CURLOPT_TIMEOUT_MS 7.16.2
CURLOPT_URL 7.1
CURLOPT_USERAGENT 7.1
CURLOPT_WRITEDATA 7.9.7
CURLOPT_WRITEFUNCTION 7.1
CURLPROTO_HTTP 7.19.4
CURLPROTO_HTTPS 7.19.4
CURL_CSELECT_IN 7.16.3
CURL_CSELECT_OUT 7.16.3
CURL_GLOBAL_ALL 7.8
CURL_HTTP_VERSION_1_0 7.9.1
CURL_HTTP_VERSION_1_1 7.9.1
CURL_HTTP_VERSION_2TLS 7.47.0
CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE 7.49.0
CURL_POLL_IN 7.14.0
CURL_POLL_OUT 7.14.0
CURL_POLL_REMOVE 7.14.0
CURL_SOCKET_BAD 7.16.0
CURL_SOCKET_TIMEOUT 7.14.0
curl_multi_socket_action 7.15.4
'
# used only behind a LIBCURL_VERSION_NUM check for the version named
guarded='CURLOPT_PROTOCOLS_STR CURLOPT_REDIR_PROTOCOLS_STR CURLE_TOO_LARGE CURLOPT_QUICK_EXIT CURLOPT_RESOLVER_START_FUNCTION'
minimum=7.51.0

# 1. every symbol used is listed, and the newest listed is the minimum
cd "$here"
used=$(grep -ohE '\b(CURLOPT|CURLINFO|CURLMOPT|CURLE|CURLPROTO|CURLMSG|CURLM|CURL_POLL|CURL_CSELECT|CURL_SOCKET|CURL_HTTP_VERSION|CURL_GLOBAL)_[A-Z0-9_]+|\bcurl_multi_socket_action\b' src/*.c src/*.h src/*/*.c src/*/*.h | sort -u)
missing=0
for sym in $used; do
	case " $guarded " in *" $sym "*) continue ;; esac
	if ! grep -q "^$sym " <<<"$symbols"; then
		echo "check-old-curl: $sym is not in the table: add the libcurl version that introduced it"
		missing=1
	fi
done
[ $missing = 0 ] || exit 1
newest=$(grep -v '^$' <<<"$symbols" | awk '{print $2}' | sort -V | tail -1)
[ "$newest" = "$minimum" ] ||
	{ echo "check-old-curl: newest symbol needs $newest, the stated minimum is $minimum"; exit 1; }
hex=$(printf '0x%02X%02X%02X' $(tr . ' ' <<<"$minimum"))
grep -q "LIBCURL_VERSION_NUM < $hex" src/net/http.c ||
	{ echo "check-old-curl: src/net/http.c does not enforce $minimum ($hex)"; exit 1; }
grep -q "libcurl $minimum or later" docs/install.md ||
	{ echo "check-old-curl: docs/install.md does not state libcurl $minimum or later"; exit 1; }
echo "check-old-curl: $(wc -w <<<"$used") libcurl symbols used, the newest needs $minimum"

# 2. bullseye's libcurl headers, extracted once
mkdir -p /var/cache/lancelsm
exec 9>/var/cache/lancelsm/curl-bullseye.lock
flock 9
if [ ! -f "$cache/usr/include/x86_64-linux-gnu/curl/curlver.h" ]; then
	command -v mmdebstrap >/dev/null ||
		flock /tmp/lancelsm-apt.lock apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
	rm -rf "$cache.tmp"
	mmdebstrap --quiet --variant=extract --include=libcurl4-openssl-dev \
		bullseye "$cache.tmp" "$("$here/scripts/debian-archive.sh")"
	rm -rf "$cache"
	mv "$cache.tmp" "$cache"
fi
flock -u 9
old_inc="$cache/usr/include/$(gcc -print-multiarch)"
old_version=$(sed -n 's/^#define LIBCURL_VERSION "\(.*\)"/\1/p' "$old_inc/curl/curlver.h")

# 3. compile every curl-using file against those headers
flags=(-std=gnu99 -Wall -Wmissing-prototypes -Wpointer-arith -Werror
	-I"$old_inc" -Isrc -I"$(pg_config --includedir-server)"
	-DLANCELSM_VERSION="\"old-curl-check\"" -DLANCELSM_RELEASE="\"old-curl-check\"")
files=$(grep -l "#include <curl/curl.h>" src/*.c src/*/*.c)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for f in $files; do
	gcc "${flags[@]}" -fsyntax-only "$f"
	# the fallback is what this libcurl gets
	if [ "$f" = src/net/http.c ]; then
		# (only lines of $f itself, by the preprocessor's line markers)
		gcc "${flags[@]}" -E "$f" |
			awk -v f="\"$f\"" '/^# [0-9]+ "/ { mine = ($3 == f); next } mine' >"$tmp"
		grep -qw 'CURLOPT_PROTOCOLS' "$tmp" && ! grep -qw 'CURLOPT_PROTOCOLS_STR' "$tmp" ||
			{ echo "check-old-curl: $f did not take the CURLOPT_PROTOCOLS fallback"; exit 1; }
	fi
done
echo "check-old-curl: $(echo $files) compile against libcurl $old_version headers (CURLOPT_PROTOCOLS fallback)"
