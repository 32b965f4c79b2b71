//go:build tools

// The command tests/node/build.sh builds; listed so that `go mod tidy` keeps its package.
package tools

import _ "sigs.k8s.io/kueue/cmd/kueue"
