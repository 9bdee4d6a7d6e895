#!/bin/bash
# Entrypoint of localhost/kubectl-storage/mariadb:test (Debian bookworm's mariadb-server).
# Follows the official mysql/mariadb image contract closely enough for tests:
#   * an empty /var/lib/mysql is initialised on first start;
#   * MARIADB_ROOT_PASSWORD or MYSQL_ROOT_PASSWORD sets root's password (root@localhost and root@'%');
#     MARIADB_ALLOW_EMPTY_ROOT_PASSWORD / MYSQL_ALLOW_EMPTY_PASSWORD allow none,
#     MARIADB_RANDOM_ROOT_PASSWORD / MYSQL_RANDOM_ROOT_PASSWORD generate one;
#   * MARIADB_DATABASE / MYSQL_DATABASE creates a database, MARIADB_USER / MYSQL_USER with
#     MARIADB_PASSWORD / MYSQL_PASSWORD creates a user with all rights on it;
#   * *.sql, *.sql.gz and *.sh in /docker-entrypoint-initdb.d run once, after that;
#   * the server listens on 3306 on all addresses and runs as the mysql user (uid 999):
#     started as root, the script fixes ownership and drops privileges.
set -eo pipefail

log() { echo "$(date -u +%FT%TZ) [Entrypoint]: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
env2() { local a="${!1:-}" b="${!2:-}"; echo "${a:-$b}"; }

if [ "${1:0:1}" = '-' ]; then set -- mariadbd "$@"; fi
case "$1" in mariadbd|mysqld) ;; *) exec "$@" ;; esac

DATADIR=/var/lib/mysql
SOCKET=/run/mysqld/mysqld.sock

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$DATADIR" /run/mysqld
  find "$DATADIR" /run/mysqld \! -user mysql -exec chown mysql:mysql '{}' +
  exec setpriv --reuid=mysql --regid=mysql --init-groups "$0" "$@"
fi

ROOT_PW=$(env2 MARIADB_ROOT_PASSWORD MYSQL_ROOT_PASSWORD)
ALLOW_EMPTY=$(env2 MARIADB_ALLOW_EMPTY_ROOT_PASSWORD MYSQL_ALLOW_EMPTY_PASSWORD)
RANDOM_PW=$(env2 MARIADB_RANDOM_ROOT_PASSWORD MYSQL_RANDOM_ROOT_PASSWORD)
DATABASE=$(env2 MARIADB_DATABASE MYSQL_DATABASE)
USER_NAME=$(env2 MARIADB_USER MYSQL_USER)
USER_PW=$(env2 MARIADB_PASSWORD MYSQL_PASSWORD)

sql_escape() { printf '%s' "$1" | sed -e "s/\\\\/\\\\\\\\/g" -e "s/'/\\\\'/g"; }

if [ ! -d "$DATADIR/mysql" ]; then
  if [ -z "$ROOT_PW" ] && [ -z "$ALLOW_EMPTY" ] && [ -z "$RANDOM_PW" ]; then
    die "Database is uninitialized and password option is not specified
	You need to specify one of MARIADB_ROOT_PASSWORD, MARIADB_ALLOW_EMPTY_ROOT_PASSWORD and MARIADB_RANDOM_ROOT_PASSWORD"
  fi
  if [ -n "$RANDOM_PW" ] && [ -z "$ROOT_PW" ]; then
    # without pipefail here: tr ends on SIGPIPE once head has its 32 characters
    ROOT_PW=$(set +o pipefail; tr -dc 'A-Za-z0-9' </dev/urandom | head -c 32)
    log "GENERATED ROOT PASSWORD: $ROOT_PW"
  fi
  log "Initializing database files in $DATADIR"
  # --rpm skips the hostname look-up (no /etc/hosts outside Kubernetes), as the official image does
  mariadb-install-db --datadir="$DATADIR" --rpm --auth-root-authentication-method=normal \
    --skip-test-db --skip-log-bin --loose-innodb_buffer_pool_load_at_startup=0 >&2 \
    || die "mariadb-install-db failed"
  log "Starting temporary server"
  "$@" --skip-networking --socket="$SOCKET" --datadir="$DATADIR" &
  pid=$!
  for _ in $(seq 60); do
    mariadb-admin --socket="$SOCKET" -uroot ping >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || die "temporary server exited"
    sleep 1
  done
  mariadb-admin --socket="$SOCKET" -uroot ping >/dev/null 2>&1 || die "temporary server did not start"
  pw=$(sql_escape "$ROOT_PW")
  {
    echo "SET @@SESSION.SQL_LOG_BIN=0;"
    echo "DELETE FROM mysql.global_priv WHERE User='' OR (User='root' AND Host NOT IN ('localhost'));"
    echo "ALTER USER 'root'@'localhost' IDENTIFIED BY '$pw';"
    echo "CREATE USER 'root'@'%' IDENTIFIED BY '$pw';"
    echo "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
    echo "FLUSH PRIVILEGES;"
    [ -n "$DATABASE" ] && echo "CREATE DATABASE IF NOT EXISTS \`$DATABASE\`;"
    if [ -n "$USER_NAME" ] && [ -n "$USER_PW" ]; then
      echo "CREATE USER '$(sql_escape "$USER_NAME")'@'%' IDENTIFIED BY '$(sql_escape "$USER_PW")';"
      [ -n "$DATABASE" ] && echo "GRANT ALL ON \`$DATABASE\`.* TO '$(sql_escape "$USER_NAME")'@'%';"
    fi
  } | mariadb --socket="$SOCKET" -uroot --protocol=socket
  client=(mariadb --socket="$SOCKET" -uroot --protocol=socket)
  [ -n "$ROOT_PW" ] && client+=("-p$ROOT_PW")
  [ -n "$DATABASE" ] && client+=("$DATABASE")
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh)     log "running $f"; . "$f" ;;
      *.sql)    log "running $f"; "${client[@]}" < "$f" ;;
      *.sql.gz) log "running $f"; gunzip -c "$f" | "${client[@]}" ;;
      *) ;;
    esac
  done
  log "Stopping temporary server"
  kill "$pid"; wait "$pid" || true
  log "MariaDB init process done. Ready for start up."
fi

exec "$@" --datadir="$DATADIR"
