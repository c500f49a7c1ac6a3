#!/bin/sh
# The loop users write today: one curl per file, its bytes base64-encoded in a shell pipe,
# N at once with xargs -P. Prints each answer's HTTP status on its own line.
# usage: URL=... KEY=... curl-inline.sh N < NUL-separated file list
n=$1
export URL KEY
exec xargs -0 -P "$n" -n 1 sh -c '
  { printf "{\"file\":{\"name\":\"%s\",\"type\":\"application/pdf\",\"data\":\"" "${1##*/}"; base64 -w0 "$1"; printf "\"}}"; } |
  curl -s -o /dev/null -w "%{http_code}\n" -X POST -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" --data-binary @- "$URL/api/v1/extract"
' sh
