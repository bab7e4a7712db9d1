// libFuzzer target for the extender's request parsing: the first byte picks the parser, the
// rest is the request body. Built with clang by serve.cmake (script mode), not by the GCC
// build. Checks that parsing never crashes, never throws, and that whatever it accepts obeys
// the request invariants the state relies on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/core/resources.hpp"
#include "greensched/serve/args_reader.hpp"
#include "greensched/serve/extender_protocol.hpp"
#include "greensched/serve/gpu_index.hpp"
#include "greensched/serve/quantity.hpp"

namespace {

using greensched::kGpuMilli;
using greensched::kMaxGpusPerNode;
using namespace greensched::serve;

void check(bool ok) {
  if (!ok) std::abort();
}

void check_request(const PodRequest& r) {
  check(!r.ref.name.empty() && !r.ref.ns.empty());
  check(r.cpu_milli >= 0 && r.cpu_milli <= kMaxPodCpuMilli);
  check(r.memory_mib >= 0 && r.memory_mib <= kMaxPodMemoryMib);
  check(r.num_gpu >= 0 && r.num_gpu <= kMaxGpusPerNode);
  check(r.gpu_milli >= 0 && r.gpu_milli <= kGpuMilli);
  check((r.num_gpu > 0) == (r.gpu_milli > 0));
  check(r.num_gpu <= 1 || r.gpu_milli == kGpuMilli);
}

void fuzz_args(std::string_view body) {
  // The fast reader and the general one must agree on every input.
  auto args = read_extender_args(body);
  auto slow = read_extender_args_slow(body);
  check(args.ok() == slow.ok());
  if (!args.ok()) {
    check(!args.error().empty() && args.error() == slow.error());
    (void)filter_error_json(args.error())
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  const PodRequest& p = args.value().pod;
  const PodRequest& q = slow.value().pod;
  check(p.ref.key() == q.ref.key() && p.ref.uid == q.ref.uid && p.cpu_milli == q.cpu_milli &&
        p.memory_mib == q.memory_mib && p.num_gpu == q.num_gpu && p.gpu_milli == q.gpu_milli &&
        p.gpu_models == q.gpu_models);
  check(args.value().node_names == slow.value().node_names);
  check(args.value().node_objects == slow.value().node_objects);
  ExtenderArgs& a = args.value();
  check_request(a.pod);
  if (a.node_objects) check(a.nodes.size() == a.node_names.size());
  FilterResult result;
  for (std::size_t i = 0; i < a.node_names.size(); ++i) {
    if (i % 2 == 0) {
      result.passed.push_back(i);
    } else {
      result.failed[a.node_names[i]] = "x";
    }
    if (a.node_objects && a.nodes[i].info) {
      check(a.nodes[i].info->gpu_count >= 0 && a.nodes[i].info->gpu_count <= kMaxGpusPerNode);
      check(a.nodes[i].info->cpu_milli >= 0 && a.nodes[i].info->memory_mib >= 0);
    }
  }
  const std::string text = filter_result_text(result, a);
  check(!nlohmann::json::parse(text, nullptr, false).is_discarded());
  std::vector<HostPriority> priorities;
  for (const std::string& name : a.node_names) priorities.push_back(HostPriority{name, 5});
  check(!nlohmann::json::parse(priority_list_text(priorities), nullptr, false).is_discarded());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0]) {
    case 'f':
      fuzz_args(body);
      break;
    case 'b': {
      nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
      if (j.is_discarded()) break;
      auto b = parse_binding_args(j);
      if (b.ok()) check(!b.value().pod.name.empty() && !b.value().node.empty());
      auto r = parse_release_args(j);
      if (r.ok()) check(!r.value().name.empty());
      break;
    }
    case 'r': {
      nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
      if (j.is_discarded()) break;
      auto pods = parse_resync(j);
      if (pods.ok()) {
        for (const ResyncPod& p : pods.value()) {
          check_request(p.request);
          check(!p.node.empty());
        }
      }
      break;
    }
    case 'q': {
      for (int64_t scale : {int64_t{1}, int64_t{1000}}) {
        auto q = parse_quantity(body, scale);
        if (q.ok()) check(q.value() >= -kMaxQuantity && q.value() <= kMaxQuantity);
      }
      break;
    }
    case 'i': {
      auto m = parse_gpu_index(body);
      if (m.ok()) check(parse_gpu_index(format_gpu_index(m.value())).value() == m.value());
      break;
    }
    default:
      fuzz_args(std::string_view(reinterpret_cast<const char*>(data), size));
      break;
  }
  return 0;
}
