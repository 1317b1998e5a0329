// Umbrella header of the msc_vk Vulkan runtime: generated code includes only this file.
#pragma once

#include "bench.h"
#include "buffer.h"
#include "context.h"
#include "dtype.h"
#include "error.h"
#include "golden.h"
#include "harness.h"
#include "model.h"
#include "ops.h"
#include "program.h"
#include "safetensors.h"
#include "shader_registry.h"
#include "weights.h"
