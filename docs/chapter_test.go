package docs

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"ftbench/chapter"
	"ftbench/engine"
)

// chapter.md's command list is the quick campaign's (scripts/chapter.sh
// writes it from bench chapter --quick --list): a change to the campaign
// that does not regenerate the page fails here.
func TestChapterCommandsCurrent(t *testing.T) {
	b, err := os.ReadFile("chapter.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- begin commands -->\n")
	block, _, ok2 := strings.Cut(rest, "<!-- end commands -->")
	if !ok || !ok2 {
		t.Fatal("chapter.md has no <!-- begin commands --> ... <!-- end commands --> section")
	}
	want, err := chapter.Commands(chapter.Quick)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(block), "```\n"), "\n```")
	if got != strings.Join(want, "\n") {
		t.Errorf("chapter.md's command list is stale: run scripts/chapter.sh\ngot:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// The fitted scale chapter.md documents is the profile's, and is the
// quotient the page says it is.
func TestChapterHardwareFit(t *testing.T) {
	h, err := engine.Hardware(chapter.Hardware)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("1 040 510 / 670 000 = **%g**", h.CPUScale); !strings.Contains(page(t, "chapter.md"), want) {
		t.Errorf("chapter.md does not state the profile's CPU scale as %q", want)
	}
	if got := 1040510.0 / 670000; math.Abs(got-h.CPUScale) > 0.0005 {
		t.Errorf("the fit 1 040 510 / 670 000 = %.4f, the profile has %g", got, h.CPUScale)
	}
}
