#!/bin/sh
# The loop users write today: one curl per file, its bytes base64-encoded in a shell pipe,
# N at once with xargs -P. With GET=1, it then reads the document (GET documents/{id}), as
# the CLI does when the inline answer has no page_count: the same requests per document.
# Prints each extract answer's HTTP status on its own line.
# usage: URL=... KEY=... [GET=1] curl-inline.sh N < NUL-separated file list
n=$1
export URL KEY GET
exec xargs -0 -P "$n" -n 1 sh -c '
  answer=$({ printf "{\"file\":{\"name\":\"%s\",\"type\":\"application/pdf\",\"data\":\"" "${1##*/}"; base64 -w0 "$1"; printf "\"}}"; } |
    curl -s -w "\n%{http_code}" -X POST -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" --data-binary @- "$URL/api/v1/extract")
  if [ "$GET" = 1 ]; then
    id=$(printf "%s" "$answer" | sed -n "1s/.*\"document_id\":\"\([^\"]*\)\".*/\1/p")
    [ -n "$id" ] && curl -s -o /dev/null -H "Authorization: Bearer $KEY" -H "Accept: application/json" "$URL/api/v1/documents/$id"
  fi
  printf "%s\n" "${answer##*
}"
' sh
