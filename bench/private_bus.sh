# Sourced by bench/bench.sh and bench/private_providers.sh, with $work (the temporary folder,
# whose $work/pids lists what cleanup stops) and $bench_name (for messages) set.
# private_bus DIR: a dbus-daemon at DIR/socket with the limits of Debian's session bus (its pid
# in $work/pids), read from its session.conf: a bus without them allows 32 MiB a message and
# 128 calls awaiting their replies per connection (libsecret's search --all makes one per item).
session_conf=/usr/share/dbus-1/session.conf
session_limits=$(grep -E '^[[:space:]]*<limit name=' "$session_conf" 2>/dev/null) \
  || { echo "$bench_name: no <limit> in $session_conf (Debian's dbus-session-bus-common)" >&2; exit 1; }
private_bus() {
  mkdir -p "$1"
  cat > "$1/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$1/socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
$session_limits
</busconfig>
CONF
  dbus-daemon --config-file="$1/bus.conf" --nofork --nopidfile 2>/dev/null &
  echo $! >> "$work/pids"
  for _ in $(seq 100); do [ -S "$1/socket" ] && return 0; sleep 0.05; done
  echo "$bench_name: dbus-daemon did not listen at $1/socket" >&2; exit 1
}
