#include "test.h"
