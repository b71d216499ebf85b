package benchcli

import (
	"os"
	"regexp"
	"testing"
)

// Every command takes --system NAME/VARIANT, and names a run's folder
// TIME-SYSTEM-VARIANT-WORKLOAD-sSEED with the variant resolved, whichever
// command ran it: run, torture, compare and sweep alike.
func TestSystemVariantAndFolderNames(t *testing.T) {
	quick := []string{"--duration", "1s", "--rate", "2000"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"run default variant", append([]string{"run", "--system", "barrier"}, quick...), `^\d{8}T[\d.]+-barrier-aligned-wordcount-s1$`},
		{"run system/variant", append([]string{"run", "--system", "barrier/unaligned"}, quick...), `^\d{8}T[\d.]+-barrier-unaligned-wordcount-s1$`},
		{"run single-variant system", append([]string{"run", "--system", "none/default"}, quick...), `^\d{8}T[\d.]+-none-default-wordcount-s1$`},
		{"compare", append([]string{"compare", "--system", "barrier", "--jobs", "1"}, quick...), `^\d{8}T[\d.]+-barrier-aligned-wordcount-s1-[0-9a-f]{12}$`},
		{"sweep", append([]string{"sweep", "--system", "barrier/unaligned", "--param", "checkpoint-interval=1s", "--jobs", "1"}, quick...), `^\d{8}T[\d.]+-barrier-unaligned-wordcount-s1-[0-9a-f]{12}$`},
		{"torture", []string{"torture", "--system", "barrier/unaligned", "--runs", "1", "--observe=false", "--jobs", "1"}, `^\d{8}T[\d.]+-barrier-unaligned-wordcount-s\d+$`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			code, stdout, stderr := bench(t, append(tc.args, "--out", dir)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			n := 0
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if !e.IsDir() {
					continue
				}
				n++
				if !regexp.MustCompile(tc.want).MatchString(e.Name()) {
					t.Errorf("folder %q does not match %s", e.Name(), tc.want)
				}
			}
			if n == 0 {
				t.Errorf("no run folder in %s: %v", dir, entries)
			}
		})
	}
	requireUsageError(t, "name different variants", "run", "--system", "barrier/aligned", "--variant", "unaligned", "--out", t.TempDir())
	requireUsageError(t, `no variant "fast"`, "run", "--system", "barrier/fast", "--out", t.TempDir())
}
