package tui

import "github.com/charmbracelet/bubbles/key"

// keyMap holds every key binding; the help screen and the footer are
// generated from it.
type keyMap struct {
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	Open     key.Binding
	Back     key.Binding
	Tab      key.Binding
	Filter   key.Binding
	Refresh  key.Binding
	Access   key.Binding
	Diff     key.Binding
	Mark     key.Binding
	Help     key.Binding
	Quit     key.Binding
}

func newKeyMap() keyMap {
	return keyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "move up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "move down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f", " "), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first item")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last item")),
		Open:     key.NewBinding(key.WithKeys("enter", "right", "l"), key.WithHelp("enter", "open")),
		Back:     key.NewBinding(key.WithKeys("esc", "backspace", "left", "h"), key.WithHelp("esc", "back")),
		Tab:      key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "switch tab")),
		Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Refresh:  key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "refresh")),
		Access:   key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "access")),
		Diff:     key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "values diff")),
		Mark:     key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "mark to diff")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// ShortHelp is the footer's reminder.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Help, k.Open, k.Access, k.Back, k.Filter, k.Diff, k.Mark, k.Tab, k.Quit}
}

// FullHelp is the help screen, one group per column.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Back, k.Access, k.Diff, k.Mark, k.Tab, k.Filter, k.Refresh, k.Help, k.Quit},
	}
}
