// greensched convert: what users have (kubectl JSON dumps, Slurm sacct and scontrol output) to
// the openb node and pod lists `greensched simulate --nodes --pods` runs (src/greensched/
// convert/). Prints what happened to every input row: kept, kept with inferred values (and
// what), dropped (and why), each at file:line.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/convert/convert_kubectl.hpp"
#include "greensched/convert/convert_sacct.hpp"
#include "greensched/core/text_file.hpp"

namespace greensched::app {
namespace {

struct ConvertOptions {
  std::string nodes;  // kubectl: NodeList JSON; sacct: scontrol show node -o
  std::string pods;   // kubectl: PodList JSON
  std::string jobs;   // sacct --parsable2
  std::string out;
  bool json = false;
  std::vector<std::string> gpu_models;  // --gpu-model LABEL=MODEL
  bool allow_dropped = false;
};

Result<std::optional<convert::SourceText>> read_source(const std::string& path) {
  if (path.empty()) return std::optional<convert::SourceText>{};
  auto text = read_file(path);
  if (!text.ok()) return Error{text.error(), text.code()};
  return std::optional<convert::SourceText>{convert::SourceText{path, std::move(text.value())}};
}

int finish(Result<convert::ConvertOutput> converted, const ConvertOptions& o) {
  if (!converted.ok()) return fail(converted);
  convert::ConvertOutput& out = converted.value();
  if (Status s = convert::write_converted(out, o.out); !s.ok()) return fail(s);
  int64_t dropped = 0;
  for (const convert::TableSummary& t : out.summary.tables) dropped += t.dropped;
  if (o.json) {
    fmt::print("{}\n", convert::summary_json(out.summary).dump(2));
  } else {
    fmt::print("{}", convert::summary_text(out.summary));
    std::string nodes, pods;
    for (const convert::TableSummary& t : out.summary.tables) {
      (t.what == "nodes" ? nodes : pods) = t.output;
    }
    // The next step, as a command that runs on what was written: the cluster's own history
    // replayed (a dump's pods, or a Slurm accounting, are a history, not a distribution).
    const std::string unlabelled = fmt::format(",{}\n", convert::kUnlabelledModel);
    if (out.nodes_csv.find(unlabelled) != std::string::npos) {
      fmt::print(
          "next: name the GPU model of the unlabelled nodes: run this again with "
          "--gpu-model {}=MODEL (e.g. {}=A100)\n",
          convert::kUnlabelledModel, convert::kUnlabelledModel);
    } else if (nodes.empty()) {
      fmt::print(
          "next: write a node list (docs/BRING-YOUR-OWN.md, By hand), then: greensched simulate "
          "--mode replay --nodes NODES.csv --pods {} --policy fgd,bestfit --queue backfill "
          "--out {}/replay\n",
          pods, o.out);
    } else {
      fmt::print(
          "next: greensched simulate --mode replay --nodes {} --pods {} --policy fgd,bestfit "
          "--queue backfill --out {}/replay\n",
          nodes, pods.empty() ? "PODS.csv" : pods, o.out);
    }
  }
  if (dropped > 0 && !o.allow_dropped) {
    return fail(fmt::format(
        "{} row(s) dropped (each listed above, with its file:line and why); the files are "
        "written without them: pass --allow-dropped to accept that",
        dropped));
  }
  return 0;
}

int run_kubectl(const ConvertOptions& o) {
  auto nodes = read_source(o.nodes);
  if (!nodes.ok()) return fail(nodes);
  auto pods = read_source(o.pods);
  if (!pods.ok()) return fail(pods);
  auto models = convert::parse_gpu_model_map(o.gpu_models);
  if (!models.ok()) return fail(models.error(), kExitUsage);
  return finish(convert::convert_kubectl(*nodes.value(), pods.value(), models.value()), o);
}

int run_sacct(const ConvertOptions& o) {
  auto jobs = read_source(o.jobs);
  if (!jobs.ok()) return fail(jobs);
  auto nodes = read_source(o.nodes);
  if (!nodes.ok()) return fail(nodes);
  auto models = convert::parse_gpu_model_map(o.gpu_models);
  if (!models.ok()) return fail(models.error(), kExitUsage);
  return finish(convert::convert_sacct(*jobs.value(), nodes.value(), models.value()), o);
}

void add_shared_options(CLI::App* cmd, ConvertOptions& o) {
  cmd->add_option("--gpu-model", o.gpu_models,
                  "LABEL=MODEL: use MODEL for GPUs labelled LABEL (as the dump names them, or as "
                  "greensched does), e.g. unlabelled=A100 for GPU nodes without a model label; "
                  "repeat for several")
      ->type_name("LABEL=MODEL")
      ->take_all();
  cmd->add_flag("--allow-dropped", o.allow_dropped,
                "exit 0 although rows were dropped (by default a dropped row is exit 1, the "
                "files written without it)");
}

}  // namespace

Action add_convert_command(CLI::App& app) {
  auto opts = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Turn kubectl or Slurm dumps into openb node and pod lists that `greensched simulate` runs");
  cmd->require_subcommand(1);
  cmd->footer(
      "Every input row is counted: kept, kept with inferred values (saying what), or dropped\n"
      "(saying why), each at file:line. A file that is not JSON / has no header fails (exit 1);\n"
      "so does a dropped row, unless --allow-dropped (the files are written either way). The\n"
      "last line says what to run next on what was written.\n\n"
      "Examples:\n"
      "  kubectl get nodes -o json > nodes.json; kubectl get pods -A -o json > pods.json\n"
      "  greensched convert kubectl --nodes nodes.json --pods pods.json --out mycluster\n"
      "  sacct -a -S 2024-01-01 --parsable2 \\\n"
      "    --format JobID,JobName,Partition,Submit,Start,End,Elapsed,State,AllocCPUS,ReqMem,\\\n"
      "AllocTRES,ReqTRES,NNodes,NodeList > jobs.txt; scontrol show node -o > nodes.txt\n"
      "  greensched convert sacct --jobs jobs.txt --nodes nodes.txt --out myslurm\n"
      "  greensched simulate --mode replay --nodes mycluster/nodes.csv --pods mycluster/pods.csv "
      "\\\n"
      "      --policy fgd,bestfit --queue backfill --out mycluster/replay");

  CLI::App* kubectl = cmd->add_subcommand(
      "kubectl", "From `kubectl get nodes -o json` and `kubectl get pods -A -o json`");
  kubectl->footer(
      "Nodes: allocatable cpu, memory and GPUs (alibabacloud.com/gpu-count, else nvidia.com/gpu),\n"
      "GPU model label alibabacloud.com/gpu-card-model, else nvidia.com/gpu.product (none:\n"
      "'unlabelled', to be named with --gpu-model unlabelled=MODEL).\n"
      "Pods: cpu/memory requests; GPUs as nvidia.com/gpu, HAMi nvidia.com/gpumem-percentage,\n"
      "nvidia.com/gpumem (MiB; a share of the node's nvidia.com/gpu.memory label when known),\n"
      "nvidia.com/gpucores (percent), alibabacloud.com/gpu-milli and gpu-count; the GPU model\n"
      "from the alibabacloud.com/gpu-card-model annotation, else a nodeSelector on it or on\n"
      "nvidia.com/gpu.product, else a required node affinity In either; QoS from\n"
      "status.qosClass (BestEffort -> BE), else spec.priority; times from creationTimestamp,\n"
      "status.startTime and the containers' finishedAt, in seconds from the first creation.\n\n"
      "Example:\n"
      "  greensched convert kubectl --nodes nodes.json --pods pods.json --out mycluster");
  kubectl->add_option("--nodes", opts->nodes, "`kubectl get nodes -o json` output (v1.NodeList)")
      ->required();
  kubectl->add_option("--pods", opts->pods, "`kubectl get pods -A -o json` output (v1.PodList)");
  kubectl->add_option("--out", opts->out, "folder to write nodes.csv and pods.csv into")
      ->required();
  kubectl->add_flag("--json", opts->json, "print the summary as JSON");
  add_shared_options(kubectl, *opts);

  CLI::App* sacct = cmd->add_subcommand(
      "sacct", "From `sacct --parsable2` (and `scontrol show node -o` for the nodes)");
  sacct->footer(
      "Jobs: JobID (steps like 123.batch are skipped: the job's own line counts), AllocCPUS (else "
      "ReqCPUS),\n"
      "memory from TRES mem= (else ReqMem), GPUs from gres/gpu=N or gres/gpu:MODEL=N in\n"
      "AllocTRES (else ReqTRES), NNodes (a job on N nodes is N pods), Submit/Start/End (no time\n"
      "zone in Slurm's stamps: read as UTC). Nodes: NodeName, CPUTot, RealMemory, "
      "Gres=gpu:MODEL:N.\n\n"
      "Example:\n"
      "  greensched convert sacct --jobs jobs.txt --nodes nodes.txt --out myslurm");
  sacct->add_option("--jobs", opts->jobs, "`sacct --parsable2` output ('|'-separated, a header)")
      ->required();
  sacct->add_option("--nodes", opts->nodes, "`scontrol show node -o` output (one node a line)");
  sacct->add_option("--out", opts->out, "folder to write pods.csv (and nodes.csv) into")
      ->required();
  sacct->add_flag("--json", opts->json, "print the summary as JSON");
  add_shared_options(sacct, *opts);

  return [opts, kubectl, sacct] {
    if (kubectl->parsed()) return run_kubectl(*opts);
    if (sacct->parsed()) return run_sacct(*opts);
    return fail("convert: name a source: kubectl or sacct", kExitUsage);
  };
}

}  // namespace greensched::app
