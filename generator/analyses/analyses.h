// The analyses `generate` runs on a graph after its passes, in order: the use-def index, the
// fusion decisions, the memory plan. They decide; emit::Context only writes their results into
// the template context.
#pragma once

#include <optional>

#include "generator/analyses/dataflow.h"
#include "generator/analyses/fusion.h"
#include "generator/analyses/memory_plan.h"

namespace msc::analyses {

/// Every analysis of one graph. Views `graph` (which must outlive it and stay unchanged).
struct GraphAnalyses {
  /// Runs PlanFusion, then PlanMemory when memory.alignment > 0. Throws what they throw.
  GraphAnalyses(const ir::MSCGraph& graph, const opdef::OpDefRegistry& opdefs,
                const FusionOptions& fusion_options, const MemoryOptions& memory_options)
      : dataflow(graph), fusion(PlanFusion(dataflow, fusion_options)) {
    if (memory_options.alignment > 0) memory = PlanMemory(dataflow, fusion, opdefs, memory_options);
  }

  Dataflow dataflow;
  FusionPlan fusion;
  std::optional<MemoryPlan> memory;  ///< none without a memory plan
};

}  // namespace msc::analyses
