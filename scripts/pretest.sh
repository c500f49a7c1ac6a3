#!/usr/bin/env bash
# `npm test` runs this first (package.json "pretest"): the suite needs a few programs beyond
# Node and npm, all Debian packages. Missing ones are installed when this may (root, with
# apt-get); otherwise it stops at once, naming the exact command to run. Never a silent skip:
# a green suite means the browser, benchmark and shared-journal tests ran.
#
#   chromium-headless-shell
#                     the application's browser tests (test/app; EXTRACT_TEST_CHROMIUM: another
#                     chromium): Blink as in chromium, without the browser around it
#   wrk, curl, time   the benchmarks' smoke test (test/bench: wrk and curl load, /usr/bin/time measures)
#   postgresql        the shared journal's tests start a throwaway server (initdb, pg_ctl)
#   pgbouncer         ... and PgBouncer in transaction mode in front of it
#   bsdutils          script(1): a terminal for the hidden-prompt test of "extract config set"
#   qpdf              encrypts a PDF with AES-256 as Acrobat does (R6), which pdfkit cannot (test/pdf)
#
# EXTRACT_PRETEST_ROOT prefixes the absolute paths looked at (tests of this script only).
set -u
root=${EXTRACT_PRETEST_ROOT:-}

need() { # need PACKAGE: adds it once
  local p
  for p in "${missing[@]}"; do [ "$p" = "$1" ] && return; done
  missing+=("$1")
}
has() { command -v "$1" >/dev/null 2>&1; }
check() { # fills `missing` with the packages of what is not there
  missing=()
  if [ -n "${EXTRACT_TEST_CHROMIUM:-}" ]; then
    [ -x "$EXTRACT_TEST_CHROMIUM" ] || need chromium-headless-shell
  else
    [ -x "$root/usr/bin/chromium-headless-shell" ] || need chromium-headless-shell
  fi
  has wrk || need wrk
  has curl || need curl
  [ -x "$root/usr/bin/time" ] || need time
  compgen -G "$root/usr/lib/postgresql/*/bin/initdb" >/dev/null || need postgresql
  has pgbouncer || need pgbouncer
  has script || need bsdutils
  has qpdf || need qpdf
}

check
[ ${#missing[@]} -eq 0 ] && exit 0

install="apt-get update && apt-get install -y ${missing[*]}"
if ! has apt-get; then
  echo "pretest: the test suite needs these Debian packages, missing here: ${missing[*]}" >&2
  echo "pretest: this machine has no apt-get: install their equivalents with its package manager, then run npm test again" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "pretest: the test suite needs these Debian packages, missing here: ${missing[*]}" >&2
  echo "pretest: install them, then run npm test again:" >&2
  echo "  sudo sh -c '$install'" >&2
  exit 1
fi
echo "pretest: installing what the test suite needs: ${missing[*]}" >&2
if ! (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}") >&2; then
  echo "pretest: the install failed (above); run it yourself, then npm test again:" >&2
  echo "  $install" >&2
  exit 1
fi
check
if [ ${#missing[@]} -ne 0 ]; then
  echo "pretest: still missing after the install: ${missing[*]}; install them, then run npm test again:" >&2
  echo "  $install" >&2
  exit 1
fi
