package tui

import (
	"io"
	"os"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Colours adapt to light and dark terminals.
var (
	colorAccent   = lipgloss.AdaptiveColor{Light: "#5A3FC0", Dark: "#B4A7FF"}
	colorSubtle   = lipgloss.AdaptiveColor{Light: "#6C6C6C", Dark: "#9A9A9A"}
	colorError    = lipgloss.AdaptiveColor{Light: "#B3261E", Dark: "#FF7B72"}
	colorSelectBg = lipgloss.AdaptiveColor{Light: "#E6E0FF", Dark: "#3A3260"}
	colorSelectFg = lipgloss.AdaptiveColor{Light: "#1E1A33", Dark: "#F2EFFF"}
	colorCode     = lipgloss.AdaptiveColor{Light: "#1F6F3F", Dark: "#7EE2A8"}
)

// styles are every lipgloss style of the browser, built once from one
// renderer so NO_COLOR can switch them all off together.
type styles struct {
	brand     lipgloss.Style
	tabActive lipgloss.Style
	tabIdle   lipgloss.Style
	crumb     lipgloss.Style
	colHeader lipgloss.Style
	selected  lipgloss.Style
	dim       lipgloss.Style
	label     lipgloss.Style
	title     lipgloss.Style
	code      lipgloss.Style
	statusErr lipgloss.Style
	filter    lipgloss.Style
	spinner   lipgloss.Style
	// A diff's lines: added, removed, changed and hunk headers.
	added   lipgloss.Style
	removed lipgloss.Style
	changed lipgloss.Style
	hunk    lipgloss.Style
}

// newStyles builds the styles for output. With noColor the renderer uses
// the ASCII profile, which drops every colour and attribute; the UI stays
// usable because selection and tabs are also marked with characters.
func newStyles(out io.Writer, noColor bool) styles {
	var r *lipgloss.Renderer
	switch {
	case noColor:
		r = lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(termenv.Ascii)
		// Set explicitly so the renderer never queries a terminal.
		r.SetHasDarkBackground(true)
	case out == nil || out == io.Writer(os.Stdout):
		r = lipgloss.DefaultRenderer()
	default:
		r = lipgloss.NewRenderer(out)
	}
	return styles{
		brand:     r.NewStyle().Bold(true).Foreground(colorAccent),
		tabActive: r.NewStyle().Bold(true).Foreground(colorAccent),
		tabIdle:   r.NewStyle().Foreground(colorSubtle),
		crumb:     r.NewStyle().Foreground(colorSubtle),
		colHeader: r.NewStyle().Bold(true).Foreground(colorSubtle),
		selected:  r.NewStyle().Background(colorSelectBg).Foreground(colorSelectFg),
		dim:       r.NewStyle().Foreground(colorSubtle),
		label:     r.NewStyle().Foreground(colorSubtle),
		title:     r.NewStyle().Bold(true),
		code:      r.NewStyle().Foreground(colorCode),
		statusErr: r.NewStyle().Foreground(colorError),
		filter:    r.NewStyle().Foreground(colorAccent),
		spinner:   r.NewStyle().Foreground(colorAccent),
		added:     r.NewStyle().Foreground(colorCode),
		removed:   r.NewStyle().Foreground(colorError),
		changed:   r.NewStyle().Foreground(colorAccent),
		hunk:      r.NewStyle().Foreground(colorAccent),
	}
}
