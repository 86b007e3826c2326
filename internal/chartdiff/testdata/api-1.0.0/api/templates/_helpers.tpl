{{- define "api.fullname" -}}
{{ .Release.Name }}-{{ .Chart.Name }}
{{- end -}}
