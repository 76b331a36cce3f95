#!/bin/sh
# nginx with nchan's EventSource subscriber and publisher endpoints on 127.0.0.1:PORT, for
# headroom's SSE tests (scripts/nchan.sh installs them):
#   GET  /sub/ROOM   an EventSource stream of channel ROOM (`nchan_subscriber eventsource`)
#   POST /pub/ROOM   publishes the body to channel ROOM (`nchan_publisher`)
#   GET  /healthz    200 once nginx listens
# nginx runs in the foreground; its configuration and temporary files live in a folder of
# their own, removed when it stops.
set -eu
port="$1"
modules="${NCHAN_MODULE_DIR:-/usr/lib/nginx/modules}"
dir="$(mktemp -d "${TMPDIR:-/tmp}/headroom-nchan.XXXXXX")"
cat >"$dir/nginx.conf" <<CONF
load_module $modules/ngx_nchan_module.so;
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log stderr warn;
events { worker_connections 16384; }
http {
    access_log off;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    server {
        listen 127.0.0.1:$port;
        location = /healthz { return 200 "ok\n"; }
        location ~ ^/sub/(\w+)$ {
            nchan_subscriber eventsource;
            nchan_channel_id \$1;
            nchan_subscriber_first_message newest;
        }
        location ~ ^/pub/(\w+)$ {
            nchan_publisher;
            nchan_channel_id \$1;
            nchan_message_buffer_length 100;
        }
        location = /nchan_status { nchan_stub_status; }
    }
}
CONF
nginx -p "$dir" -c "$dir/nginx.conf" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"; exit 0' TERM INT
wait "$pid" || true
rm -rf "$dir"
