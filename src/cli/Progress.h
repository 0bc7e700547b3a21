//===- Progress.h - Stage and progress lines (the driver library's) --------===//
#pragma once

#include "bundlefit/driver/Progress.h"
