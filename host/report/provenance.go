package report

import "html/template"

// The "plugins" section of a pipeline in report.html: which plugin, of
// which version, from where (bundled, or an external executable's path
// and SHA-256) produced its rows. A row's plugins are the construction's,
// its layerer's (the table's layerer column) and the mappers'.
var _ = template.Must(htmlTemplate.New("plugins").Parse(`{{if .Plugins}}<h3>Plugins</h3>
<p class="meta">Every row was produced by the construction and mapper plugins below and the layerer plugin its layerer column names.</p>
<table class="plugins"><tr><th>kind</th><th>name</th><th>version</th><th>source</th><th>SHA-256</th></tr>
{{range .Plugins}}<tr><td>{{.Kind}}</td><td>{{.Name}}</td><td>{{.Version}}</td><td>{{if eq .Source "bundled"}}bundled{{else}}<code>{{.Source}}</code>{{end}}</td><td>{{if .SHA256}}<code>{{.SHA256}}</code>{{end}}</td></tr>
{{end}}</table>{{end}}`))
