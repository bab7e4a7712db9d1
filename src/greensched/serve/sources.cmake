# The Kubernetes scheduler extender (greensched serve): listed into greensched_lib.
target_sources(greensched_lib PRIVATE
  greensched/serve/quantity.cpp
  greensched/serve/gpu_index.cpp
  greensched/serve/json_fields.cpp
  greensched/serve/json_text.cpp
  greensched/serve/pod_request.cpp
  greensched/serve/node_object.cpp
  greensched/serve/extender_protocol.cpp
  greensched/serve/args_reader.cpp
  greensched/serve/filter_message.cpp
  greensched/serve/decision_log.cpp
  greensched/serve/journal.cpp
  greensched/serve/cluster_state.cpp
  greensched/serve/extender.cpp
  greensched/serve/resync.cpp
  greensched/serve/metrics.cpp
  greensched/serve/kube_binder.cpp
  greensched/serve/pod_watcher.cpp
  greensched/serve/http_server.cpp
  greensched/serve/serve_config.cpp
  greensched/serve/service.cpp
)
# Debian 12: libsqlite3-dev.
find_package(SQLite3 REQUIRED)
target_link_libraries(greensched_lib PUBLIC SQLite::SQLite3)
