// The model. Nodes are grouped into types t (same GPU model, GPU count G_t, CPU C_t, memory
// M_t; n_t nodes) and the GPU pods into shapes s (same cpu c_s, memory m_s, GPU count k_s,
// per-GPU share d_s, allowed models; a_s pods). Variable x_st >= 0 is the number of pods of
// shape s placed on nodes of type t; it exists only when one pod of s fits an empty node of t.
//   maximise   sum_st k_s d_s x_st                                  (allocated GPU milli)
//   (1) supply     sum_t x_st <= a_s                                 for every s
//   (2) capacity   sum_s c_s x_st <= n_t C_t, sum_s m_s x_st <= n_t M_t,
//                  sum_s k_s d_s x_st <= 1000 n_t G_t                 for every t
//   (3) node cuts  sum_s u(size_s) x_st <= n_t                        for every t, dimension
//                  (CPU, memory, GPU milli on the node) and eps in {B/2, B/3, B/4}
//   (4) GPU cuts   sum_s k_s u(d_s) x_st <= n_t G_t                   for every t and eps in
//                  {1000/2, /3, /4, /5, /10}, each GPU a bin of B = 1000
// where u = u_eps is the dual-feasible function of Fekete and Schepers for bins of size B:
// u(v) = 1 if v > B - eps, 0 if v < eps, v / B otherwise (0 < eps <= B/2).
//
// Proof that the optimum is never below a policy's allocation. Take the cluster at any moment
// of any run that saw (at most) these pods, and let P be the pods placed then; P is a subset
// of the pods given. Set x_st = the number of pods of shape s in P on nodes of type t. Every
// pod of P sits on a node that can host it, so each x_st > 0 has its variable. (1) holds as P
// takes each pod at most once. The core refuses to overcommit any node, so on every node the
// CPU, memory and GPU milli of its pods fit; summing over the n_t nodes of t gives (2). u is
// dual-feasible: if items sum to at most B, their u values sum to at most 1 (an item above
// B - eps leaves less than eps to the others, whose u is then 0, and two such items cannot
// share a bin as eps <= B/2; otherwise every u(v) <= v / B). A node is a bin for each of its
// resources, so summing over the nodes of t gives (3). A GPU is a bin of 1000 milli holding
// either one whole-GPU pod's 1000 or sharing pods of total share <= 1000, and a pod of shape s
// puts k_s items of size d_s on k_s GPUs; summing over the n_t G_t GPUs gives (4). CPU-only
// pods appear nowhere: leaving them out only loosens the rows. So x is feasible and its
// objective is exactly P's allocated GPU milli, which the LP optimum bounds from above. x is
// integral, so the same holds for the integer form, where we report CBC's proven dual bound
// (not its best solution) when it stops at the time limit. Offline nodes are taken as online,
// which can only raise the bound. The solver's result is raised by a relative 1e-9 plus 1
// milli to absorb floating-point tolerances.
#include "greensched/learn/bound.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include <coin/CbcModel.hpp>
#include <coin/ClpSimplex.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>

namespace greensched::learn {
namespace {

struct NodeType {
  GpuModelId model = kNoGpuModel;
  int gpus = 0;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int64_t count = 0;
};

struct PodShape {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int32_t gpu_milli = 0;
  GpuModelSet spec = 0;
  int64_t count = 0;
};

std::vector<NodeType> node_types(std::span<const NodeSpec> nodes) {
  std::map<std::tuple<int, int, int64_t, int64_t>, int64_t> counts;
  for (const NodeSpec& n : nodes) {
    if (n.gpu_count <= 0) continue;  // CPU-only nodes host no GPU pod
    ++counts[std::make_tuple(int{n.model}, n.gpu_count, n.cpu_milli, n.memory_mib)];
  }
  std::vector<NodeType> out;
  for (const auto& [key, count] : counts) {
    const auto& [model, gpus, cpu, mem] = key;
    out.push_back(NodeType{static_cast<GpuModelId>(model), gpus, cpu, mem, count});
  }
  return out;
}

std::vector<PodShape> pod_shapes(std::span<const PodSpec> pods) {
  std::map<std::tuple<int64_t, int64_t, int, int32_t, GpuModelSet>, int64_t> counts;
  for (const PodSpec& p : pods) {
    if (!p.needs_gpu()) continue;
    ++counts[std::make_tuple(p.cpu_milli, p.memory_mib, p.num_gpu, p.gpu_milli, p.gpu_spec)];
  }
  std::vector<PodShape> out;
  for (const auto& [key, count] : counts) {
    const auto& [cpu, mem, num_gpu, milli, spec] = key;
    out.push_back(PodShape{cpu, mem, num_gpu, milli, spec, count});
  }
  return out;
}

bool fits_empty(const PodShape& s, const NodeType& t) {
  return s.cpu_milli <= t.cpu_milli && s.memory_mib <= t.memory_mib && s.num_gpu <= t.gpus &&
         model_allowed(s.spec, t.model);
}

// The dual-feasible function u_eps for bins of size `bin`.
double dff(double v, double bin, double eps) {
  if (v > bin - eps) return 1.0;
  if (v < eps) return 0.0;
  return v / bin;
}

// Rows of the LP as sparse lists, filled per column.
struct LpBuilder {
  std::vector<double> row_upper;
  std::vector<int> col_starts{0};
  std::vector<int> row_index;
  std::vector<double> values;
  std::vector<double> objective;  // minimised: -GPU milli
  std::vector<double> col_upper;

  int add_row(double upper) {
    row_upper.push_back(upper);
    return static_cast<int>(row_upper.size()) - 1;
  }
  void add_column(double obj, double upper, const std::vector<std::pair<int, double>>& entries) {
    for (const auto& [row, v] : entries) {
      if (v == 0.0) continue;
      row_index.push_back(row);
      values.push_back(v);
    }
    col_starts.push_back(static_cast<int>(row_index.size()));
    objective.push_back(obj);
    col_upper.push_back(upper);
  }
};

}  // namespace

Result<BoundResult> allocation_upper_bound(std::span<const NodeSpec> nodes,
                                           std::span<const PodSpec> pods,
                                           const BoundOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  BoundResult result;
  for (const NodeSpec& n : nodes) result.cluster_gpu_milli += int64_t{n.gpu_count} * kGpuMilli;
  for (const PodSpec& p : pods) result.requested_gpu_milli += p.total_gpu_milli();
  const std::vector<NodeType> types = node_types(nodes);
  const std::vector<PodShape> shapes = pod_shapes(pods);
  result.node_types = static_cast<int>(types.size());
  result.pod_shapes = static_cast<int>(shapes.size());

  LpBuilder lp;
  std::vector<std::pair<std::size_t, std::size_t>> column_of;  // (type, shape) per column
  std::vector<int> supply_row(shapes.size());
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    supply_row[s] = lp.add_row(static_cast<double>(shapes[s].count));
  }
  static constexpr double kNodeEps[] = {1.0 / 2, 1.0 / 3, 1.0 / 4};
  static constexpr double kGpuEps[] = {1.0 / 2, 1.0 / 3, 1.0 / 4, 1.0 / 5, 1.0 / 10};
  const bool cuts = options.packing_cuts;
  for (std::size_t ti = 0; ti < types.size(); ++ti) {
    const NodeType& t = types[ti];
    const double n = static_cast<double>(t.count);
    const double bins[3] = {static_cast<double>(t.cpu_milli), static_cast<double>(t.memory_mib),
                            static_cast<double>(t.gpus) * kGpuMilli};
    int capacity_rows[3];
    for (int r = 0; r < 3; ++r) capacity_rows[r] = lp.add_row(n * bins[r]);
    int node_cut_rows[3][3] = {};
    int gpu_cut_rows[5] = {};
    if (cuts) {
      for (auto& dim : node_cut_rows) {
        for (int& row : dim) row = lp.add_row(n);
      }
      for (int& row : gpu_cut_rows) row = lp.add_row(n * t.gpus);
    }
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      const PodShape& p = shapes[s];
      if (!fits_empty(p, t)) continue;
      const double gpu_total = static_cast<double>(p.num_gpu) * p.gpu_milli;
      const double sizes[3] = {static_cast<double>(p.cpu_milli), static_cast<double>(p.memory_mib),
                               gpu_total};
      std::vector<std::pair<int, double>> entries;
      entries.emplace_back(supply_row[s], 1.0);
      for (int r = 0; r < 3; ++r) entries.emplace_back(capacity_rows[r], sizes[r]);
      if (cuts) {
        for (int r = 0; r < 3; ++r) {
          for (int e = 0; e < 3; ++e) {
            entries.emplace_back(node_cut_rows[r][e],
                                 dff(sizes[r], bins[r], kNodeEps[e] * bins[r]));
          }
        }
        for (int e = 0; e < 5; ++e) {
          entries.emplace_back(gpu_cut_rows[e],
                               p.num_gpu * dff(p.gpu_milli, kGpuMilli, kGpuEps[e] * kGpuMilli));
        }
      }
      lp.add_column(-gpu_total, static_cast<double>(p.count), entries);
      column_of.emplace_back(ti, s);
    }
  }
  result.rows = static_cast<int>(lp.row_upper.size());
  result.columns = static_cast<int>(lp.objective.size());
  if (result.columns == 0) {
    result.solve_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;  // no GPU pod fits anywhere: the bound is 0
  }

  CoinPackedMatrix matrix(true, result.rows, result.columns,
                          static_cast<CoinBigIndex>(lp.values.size()), lp.values.data(),
                          lp.row_index.data(), lp.col_starts.data(), nullptr);
  const std::vector<double> col_lower(lp.objective.size(), 0.0);
  const std::vector<double> row_lower(lp.row_upper.size(), -COIN_DBL_MAX);

  double minimum = 0;  // of -GPU milli
  const auto keep = [&](const double* x) {
    if (!options.keep_solution || x == nullptr) return;
    for (int c = 0; c < result.columns; ++c) {
      if (x[c] <= 1e-9) continue;
      const NodeType& t = types[column_of[c].first];
      const PodShape& p = shapes[column_of[c].second];
      result.solution.push_back(BoundFlow{t.model, t.gpus, t.cpu_milli, t.memory_mib, p.cpu_milli,
                                          p.memory_mib, p.num_gpu, p.gpu_milli, p.spec, x[c]});
    }
  };
  if (!options.integer) {
    ClpSimplex clp;
    clp.setLogLevel(0);
    clp.loadProblem(matrix, col_lower.data(), lp.col_upper.data(), lp.objective.data(),
                    row_lower.data(), lp.row_upper.data());
    clp.setOptimizationDirection(1);
    clp.initialSolve();
    if (!clp.isProvenOptimal()) {
      return Error{fmt::format("bound: CLP did not solve the LP (status {})", clp.status())};
    }
    minimum = clp.objectiveValue();
    keep(clp.primalColumnSolution());
  } else {
    OsiClpSolverInterface solver;
    solver.messageHandler()->setLogLevel(0);
    solver.loadProblem(matrix, col_lower.data(), lp.col_upper.data(), lp.objective.data(),
                       row_lower.data(), lp.row_upper.data());
    for (int c = 0; c < result.columns; ++c) solver.setInteger(c);
    CbcModel cbc(solver);
    cbc.setLogLevel(0);
    cbc.messageHandler()->setLogLevel(0);
    cbc.setUseElapsedTime(true);  // --time-limit is wall-clock time
    cbc.setMaximumSeconds(options.time_limit_s);
    cbc.branchAndBound();
    if (cbc.isProvenInfeasible()) return Error{"bound: CBC found the integer program infeasible"};
    result.proven_optimal = cbc.isProvenOptimal();
    // The proven bound on the minimum; below any integer solution, so -it bounds from above.
    minimum = cbc.getBestPossibleObjValue();
    if (result.proven_optimal) minimum = std::min(minimum, cbc.getObjValue());
    keep(cbc.bestSolution());
  }
  const double best = -minimum;
  result.upper_bound_gpu_milli = std::min(static_cast<double>(result.requested_gpu_milli),
                                          std::floor(best * (1.0 + 1e-9) + 1.0));
  result.upper_bound_gpu_milli =
      std::min(result.upper_bound_gpu_milli, static_cast<double>(result.cluster_gpu_milli));
  result.solve_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace greensched::learn
