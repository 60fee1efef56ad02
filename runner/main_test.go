package runner

import (
	"os"
	"testing"

	"github.com/benchgate/benchgate/target/targettest"
)

func TestMain(m *testing.M) { os.Exit(targettest.Main(m)) }
