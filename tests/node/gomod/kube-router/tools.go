//go:build tools

// The command tests/node/build.sh builds; listed so that `go mod tidy` keeps its package.
package tools

import _ "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"
