//go:build tools

// The command tests/node/build.sh builds; listed so that `go mod tidy` keeps its package.
package tools

import _ "github.com/ray-project/kuberay/ray-operator"
