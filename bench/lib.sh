# Helpers for bench/run (sourced). Benchmarks print progress to stderr and end stdout with their summary.

die() {
  echo "bench: $*" >&2
  exit 1
}

# Where the processes run. On a VM a wake-up that crosses CPUs is slow (about 50 us here), and the
# scheduler moves a ping-pong pair between one CPU (c1P1 ~45k/s) and two (~9k/s) as it likes, so an
# unpinned raw rate drifts fivefold. With BENCH_PLACEMENT=split (the default on 2+ CPUs) the servers
# run on CPU 0 and the benchmark (client, raw reference, redis-benchmark) on the others, as if the
# server were another machine; BENCH_PLACEMENT=shared leaves both to the scheduler.
placement_asked=${BENCH_PLACEMENT:-}
BENCH_PLACEMENT=${BENCH_PLACEMENT:-split}
server_cpus=() client_cpus=()
case $BENCH_PLACEMENT in
  split)
    if [[ $(nproc) -ge 2 ]] && command -v taskset >/dev/null; then
      server_cpus=(taskset -c 0) client_cpus=(taskset -c "1-$(($(nproc) - 1))")
    else
      BENCH_PLACEMENT=shared
    fi
    ;;
  shared) ;;
  *) die "BENCH_PLACEMENT is split or shared, not '$BENCH_PLACEMENT'" ;;
esac

# shared_placement_by_default: for a benchmark whose servers stand for several machines working at
# once (redlock3): on one CPU they would take turns. BENCH_PLACEMENT, if set, still wins.
shared_placement_by_default() {
  [[ -n $placement_asked ]] && return
  BENCH_PLACEMENT=shared server_cpus=() client_cpus=()
}

# start_redis [ARGS...]: starts a throwaway redis-server on a free loopback port, without persistence
# (ARGS are more redis-server options), and exports REDIS_PORT. The server and its directory go away
# when the script exits.
start_redis() {
  command -v redis-server >/dev/null || die "redis-server not found: install Debian's redis-server"
  REDIS_DIR=$(mktemp -d)
  trap stop_redis EXIT
  local attempt port
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    port=$((20000 + RANDOM % 40000))
    # Taken if something answers there; redis-server would also refuse to start on it.
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
    "${server_cpus[@]}" redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
      --dir "$REDIS_DIR" --logfile "$REDIS_DIR/redis.log" "$@" &
    REDIS_PID=$!
    if wait_for_redis "$port"; then
      export REDIS_PORT=$port
      echo "bench: redis-server on 127.0.0.1:$port (pid $REDIS_PID)" >&2
      return 0
    fi
    stop_redis_process
  done
  cat "$REDIS_DIR/redis.log" >&2 2>/dev/null
  die "could not start redis-server"
}

# wait_for_redis PORT [REDIS-CLI ARGS...]: waits until the server answers PING, or gives up after ~5 s
# or when it has exited.
wait_for_redis() {
  local i
  for i in $(seq 50); do
    kill -0 "$REDIS_PID" 2>/dev/null || return 1
    [[ $(redis-cli -h 127.0.0.1 -p "$1" "${@:2}" ping 2>/dev/null) == PONG ]] && return 0
    sleep 0.1
  done
  return 1
}

# start_redis_tls: as start_redis, but the server speaks TLS only (--port 0) on REDIS_TLS_PORT, with a
# certificate for IP:127.0.0.1 and DNS:localhost signed by a throwaway CA made here with `openssl`
# (REDIS_TLS_CA, its PEM file); client certificates are not asked for. Exports both.
start_redis_tls() {
  command -v redis-server >/dev/null || die "redis-server not found: install Debian's redis-server"
  command -v openssl >/dev/null || die "openssl not found: install Debian's openssl"
  REDIS_DIR=$(mktemp -d)
  trap stop_redis EXIT
  make_tls_certificates "$REDIS_DIR" || die "could not make the TLS certificates"
  local attempt port
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    port=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
    "${server_cpus[@]}" redis-server --bind 127.0.0.1 --port 0 --tls-port "$port" --save "" --appendonly no \
      --tls-cert-file "$REDIS_DIR/server.pem" --tls-key-file "$REDIS_DIR/server.key" \
      --tls-ca-cert-file "$REDIS_DIR/ca.pem" --tls-auth-clients no \
      --dir "$REDIS_DIR" --logfile "$REDIS_DIR/redis.log" &
    REDIS_PID=$!
    if wait_for_redis "$port" --tls --cacert "$REDIS_DIR/ca.pem"; then
      export REDIS_TLS_PORT=$port REDIS_TLS_CA=$REDIS_DIR/ca.pem
      echo "bench: redis-server with TLS on 127.0.0.1:$port (pid $REDIS_PID)" >&2
      return 0
    fi
    stop_redis_process
  done
  cat "$REDIS_DIR/redis.log" >&2 2>/dev/null
  die "could not start redis-server with TLS"
}

# make_tls_certificates DIR: DIR/ca.{pem,key}, a CA valid for two days, and DIR/server.{pem,key} signed
# by it (as tests/support/redis-tls-fixture makes them: P-256 keys, names in subjectAltName).
make_tls_certificates() {
  local dir=$1
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$dir/ca.key" 2>/dev/null &&
    openssl req -x509 -new -key "$dir/ca.key" -subj "/CN=deadbolt-bench-ca" -days 2 -out "$dir/ca.pem" 2>/dev/null &&
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$dir/server.key" 2>/dev/null &&
    openssl req -new -key "$dir/server.key" -subj "/CN=deadbolt-bench-server" -out "$dir/server.csr" 2>/dev/null &&
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$dir/server.ext" &&
    openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 2 \
      -extfile "$dir/server.ext" -out "$dir/server.pem" 2>/dev/null
}

stop_redis_process() {
  if [[ -n ${REDIS_PID:-} ]]; then
    kill "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
    REDIS_PID=
  fi
}

stop_redis() {
  [[ -n ${REDIS_CLUSTER_DIR:-} ]] && stop_redis_cluster
  [[ -n ${MANY_REDIS_PIDS:-} ]] && stop_redis_many
  stop_redis_process
  if [[ -n ${REDIS_DIR:-} ]]; then
    rm -rf "$REDIS_DIR"
    REDIS_DIR=
  fi
}

# start_redis_cluster N: starts a throwaway Redis Cluster of N masters without replicas (the test
# suite's fixture, tests/support/redis-cluster-fixture) and exports REDIS_CLUSTER_PORTS, the masters'
# ports comma-separated. It goes away when the script exits.
start_redis_cluster() {
  command -v redis-server >/dev/null || die "redis-server not found: install Debian's redis-server"
  REDIS_CLUSTER_DIR=$(mktemp -d)
  trap stop_redis EXIT
  "${server_cpus[@]}" "$root/tests/support/redis-cluster-fixture" start "$REDIS_CLUSTER_DIR/cluster" "$1" 0 >&2 ||
    die "could not start a redis cluster"
  REDIS_CLUSTER_PORTS=$(paste -sd, "$REDIS_CLUSTER_DIR/cluster/ports")
  export REDIS_CLUSTER_PORTS
}

stop_redis_cluster() {
  "$root/tests/support/redis-cluster-fixture" stop "$REDIS_CLUSTER_DIR/cluster" >/dev/null 2>&1 || true
  rm -rf "$REDIS_CLUSTER_DIR"
  REDIS_CLUSTER_DIR=
}

# start_redis_many N: starts N throwaway servers (as start_redis) and exports REDIS_PORTS, their ports
# comma-separated. They all go away when the script exits.
start_redis_many() {
  local i ports=() pids=() dirs=()
  for ((i = 0; i < $1; i++)); do
    start_redis
    ports+=("$REDIS_PORT") pids+=("$REDIS_PID") dirs+=("$REDIS_DIR")
    # Handed over to stop_redis_many (stop_redis, the exit trap, calls it), so the next start_redis
    # does not forget them.
    REDIS_PID= REDIS_DIR=
    MANY_REDIS_PIDS="${pids[*]}" MANY_REDIS_DIRS="${dirs[*]}"
  done
  REDIS_PORTS=$(IFS=,; echo "${ports[*]}")
  export REDIS_PORTS
}

# start_redis_replicated: a throwaway master (as start_redis) and one replica of it, started with
# `--replicaof 127.0.0.1 MASTER`; waits (up to ~10 s) until the replica reports master_link_status:up
# and the master lists it online. Exports REDIS_PORT (the master's) and REDIS_REPLICA_PORT. Both go
# away when the script exits.
start_redis_replicated() {
  start_redis_many 1  # the master, handed over to stop_redis_many
  local master=$REDIS_PORTS i
  start_redis --replicaof 127.0.0.1 "$master"
  export REDIS_REPLICA_PORT=$REDIS_PORT REDIS_PORT=$master
  for i in $(seq 100); do
    if redis-cli -h 127.0.0.1 -p "$REDIS_REPLICA_PORT" info replication | grep -q '^master_link_status:up' &&
       redis-cli -h 127.0.0.1 -p "$master" info replication | grep -q '^slave0:.*state=online'; then
      echo "bench: replica on 127.0.0.1:$REDIS_REPLICA_PORT of the master on 127.0.0.1:$master, link up" >&2
      return 0
    fi
    sleep 0.1
  done
  redis-cli -h 127.0.0.1 -p "$REDIS_REPLICA_PORT" info replication >&2
  die "the replica's link to its master did not come up"
}

stop_redis_many() {
  local pid dir
  for pid in ${MANY_REDIS_PIDS:-}; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  for dir in ${MANY_REDIS_DIRS:-}; do rm -rf "$dir"; done
  MANY_REDIS_PIDS= MANY_REDIS_DIRS=
}
