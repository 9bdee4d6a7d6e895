#!/bin/bash
# Entrypoint of localhost/kubectl-storage/mysql:test (Oracle MySQL from Debian unstable).
# A sibling of ../mariadb/docker-entrypoint.sh for MySQL's own tools (mysqld --initialize-insecure,
# mysqladmin, mysql, and mysql.user instead of MariaDB's mysql.global_priv). It follows the
# official mysql image's contract closely enough for tests:
#   * an empty /var/lib/mysql is initialised on first start;
#   * MYSQL_ROOT_PASSWORD sets root's password (root@localhost and root@'%');
#     MYSQL_ALLOW_EMPTY_PASSWORD allows none, MYSQL_RANDOM_ROOT_PASSWORD generates one;
#   * MYSQL_DATABASE creates a database, MYSQL_USER with MYSQL_PASSWORD creates a user with all
#     rights on it;
#   * *.sql, *.sql.gz and *.sh in /docker-entrypoint-initdb.d run once, after that;
#   * the server listens on 3306 on all addresses and runs as the mysql user (uid 999):
#     started as root, the script fixes ownership and drops privileges.
set -eo pipefail

log() { echo "$(date -u +%FT%TZ) [Entrypoint]: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if [ "${1:0:1}" = '-' ]; then set -- mysqld "$@"; fi
case "$1" in mysqld) ;; *) exec "$@" ;; esac

DATADIR=/var/lib/mysql
SOCKET=/run/mysqld/mysqld.sock

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$DATADIR" /run/mysqld
  find "$DATADIR" /run/mysqld \! -user mysql -exec chown mysql:mysql '{}' +
  exec setpriv --reuid=mysql --regid=mysql --init-groups "$0" "$@"
fi

ROOT_PW=${MYSQL_ROOT_PASSWORD:-}
sql_escape() { printf '%s' "$1" | sed -e "s/\\\\/\\\\\\\\/g" -e "s/'/\\\\'/g"; }

if [ ! -d "$DATADIR/mysql" ]; then
  if [ -z "$ROOT_PW" ] && [ -z "${MYSQL_ALLOW_EMPTY_PASSWORD:-}" ] && [ -z "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ]; then
    die "Database is uninitialized and password option is not specified
	You need to specify one of the following as an environment variable:
	- MYSQL_ROOT_PASSWORD
	- MYSQL_ALLOW_EMPTY_PASSWORD
	- MYSQL_RANDOM_ROOT_PASSWORD"
  fi
  if [ -n "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ] && [ -z "$ROOT_PW" ]; then
    # without pipefail here: tr ends on SIGPIPE once head has its 32 characters
    ROOT_PW=$(set +o pipefail; tr -dc 'A-Za-z0-9' </dev/urandom | head -c 32)
    log "GENERATED ROOT PASSWORD: $ROOT_PW"
  fi
  log "Initializing database files in $DATADIR"
  # The server's own options (such as --innodb-doublewrite) apply to the initialisation too,
  # as in the official image; root@localhost starts without a password.
  "$@" --initialize-insecure --datadir="$DATADIR" >&2 \
    || die "mysqld --initialize-insecure failed"
  log "Starting temporary server"
  "$@" --skip-networking --socket="$SOCKET" --datadir="$DATADIR" &
  pid=$!
  for _ in $(seq 90); do
    mysqladmin --socket="$SOCKET" -uroot ping >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || die "temporary server exited"
    sleep 1
  done
  mysqladmin --socket="$SOCKET" -uroot ping >/dev/null 2>&1 || die "temporary server did not start"
  pw=$(sql_escape "$ROOT_PW")
  {
    echo "SET @@SESSION.SQL_LOG_BIN=0;"
    # the accounts --initialize makes are root@localhost and the mysql.* system accounts
    echo "ALTER USER 'root'@'localhost' IDENTIFIED BY '$pw';"
    echo "CREATE USER 'root'@'%' IDENTIFIED BY '$pw';"
    echo "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
    [ -n "${MYSQL_DATABASE:-}" ] && echo "CREATE DATABASE IF NOT EXISTS \`$MYSQL_DATABASE\`;"
    if [ -n "${MYSQL_USER:-}" ] && [ -n "${MYSQL_PASSWORD:-}" ]; then
      echo "CREATE USER '$(sql_escape "$MYSQL_USER")'@'%' IDENTIFIED BY '$(sql_escape "$MYSQL_PASSWORD")';"
      [ -n "${MYSQL_DATABASE:-}" ] && echo "GRANT ALL ON \`$MYSQL_DATABASE\`.* TO '$(sql_escape "$MYSQL_USER")'@'%';"
    fi
    echo "FLUSH PRIVILEGES;"
  } | mysql --socket="$SOCKET" -uroot --protocol=socket
  client=(mysql --socket="$SOCKET" -uroot --protocol=socket)
  [ -n "$ROOT_PW" ] && client+=("-p$ROOT_PW")
  [ -n "${MYSQL_DATABASE:-}" ] && client+=("$MYSQL_DATABASE")
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh)     log "running $f"; . "$f" ;;
      *.sql)    log "running $f"; "${client[@]}" < "$f" ;;
      *.sql.gz) log "running $f"; gunzip -c "$f" | "${client[@]}" ;;
      *) ;;
    esac
  done
  log "Stopping temporary server"
  mysqladmin --socket="$SOCKET" -uroot ${ROOT_PW:+"-p$ROOT_PW"} shutdown >/dev/null 2>&1 || kill "$pid"
  wait "$pid" || true
  log "MySQL init process done. Ready for start up."
fi

exec "$@" --datadir="$DATADIR"
