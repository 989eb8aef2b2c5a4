#!/usr/bin/env bash
# Start PostgreSQL, Redis and RabbitMQ where they are down (the commands the machine notes give).
set -u
up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() { for _ in $(seq 1 60); do up "$1" && return 0; sleep 1; done; return 1; }
if ! up 5432; then
  echo "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start || true
  wait_port 5432 || echo "PostgreSQL still down" >&2
fi
if ! up 6379; then
  echo "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
  wait_port 6379 || echo "Redis still down" >&2
fi
if ! up 5672; then
  echo "starting RabbitMQ"
  rabbitmq-server -detached || true
  wait_port 5672 || echo "RabbitMQ still down" >&2
fi
exit 0
