-- Row 6 in bench --tiny: wrk ends after N answers instead of after its -d seconds (at least 1),
-- and reports over the time it really ran. A rot check needs both servers to answer and wrk to
-- report a rate; a second at full load cost each server a second of CPU.
-- thread:stop() ends the (one) thread; wrk's own SIGINT handler ends its wait for -d and makes it
-- report. popen, not os.execute: system() ignores SIGINT in the caller while its child runs.
-- usage: wrk -t1 -s wrk-stop.lua ... URL -- N
local limit = 1000
local answered = 0

function init(args)
  limit = tonumber(args[1]) or limit
end

function response()
  answered = answered + 1
  if answered == limit then
    wrk.thread:stop()
    io.popen('kill -INT $PPID'):close()
  end
end
