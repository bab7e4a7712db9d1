{{/* Names ---------------------------------------------------------------------------- */}}
{{- define "greensched.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "greensched.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels: (dict "root" $ "component" "dispatch") */}}
{{- define "greensched.selectorLabels" -}}
app.kubernetes.io/name: {{ include "greensched.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "greensched.labels" -}}
{{ include "greensched.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: greensched
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The image of a component: (dict "root" $ "image" .Values.dispatch.image) */}}
{{- define "greensched.image" -}}
{{- $i := merge (deepCopy (default (dict) .image)) .root.Values.image -}}
{{- printf "%s:%s" $i.repository (default .root.Chart.AppVersion $i.tag) }}
{{- end }}

{{- define "greensched.pullPolicy" -}}
{{- $i := merge (deepCopy (default (dict) .image)) .root.Values.image -}}
{{- $i.pullPolicy }}
{{- end }}

{{/* Which components are rendered. */}}
{{- define "greensched.scheduler.enabled" -}}
{{- if and .Values.extender.enabled .Values.scheduler.enabled }}true{{ end }}
{{- end }}
{{- define "greensched.descheduler.enabled" -}}
{{- if .Values.descheduler.enabled }}
{{- if not .Values.extender.enabled }}
{{- fail "descheduler.enabled needs extender.enabled: the descheduler carries out the defragmentation plan of this chart's extender (with an extender installed otherwise, run `greensched deschedule --server URL` yourself: docs/SERVE.md)" }}
{{- end }}true
{{- end }}
{{- end }}

{{/* Where a Secret comes from: "existing", "values" or "generate"; both an existing Secret
     and values is an error. (dict "what" "dispatch.tls" "existing" .existingSecret
     "values" (list .cert .key)) */}}
{{- define "greensched.source" -}}
{{- $given := false }}
{{- range .values }}{{ if . }}{{ $given = true }}{{ end }}{{ end }}
{{- if and .existing $given }}
{{- fail (printf "%s: give either existingSecret (%s) or the values, not both" .what .existing) }}
{{- else if .existing }}existing
{{- else if $given }}values
{{- else }}generate
{{- end }}
{{- end }}

{{- define "greensched.extenderTLSSource" -}}
{{- include "greensched.source" (dict "what" "extender.tls" "existing" .Values.extender.tls.existingSecret "values" (list .Values.extender.tls.cert .Values.extender.tls.key .Values.extender.tls.clientCA)) }}
{{- end }}
{{- define "greensched.schedulerTLSSource" -}}
{{- include "greensched.source" (dict "what" "scheduler.tls" "existing" .Values.scheduler.tls.existingSecret "values" (list .Values.scheduler.tls.cert .Values.scheduler.tls.key .Values.scheduler.tls.serverCA)) }}
{{- end }}
{{- define "greensched.deschedulerTLSSource" -}}
{{- include "greensched.source" (dict "what" "descheduler.tls" "existing" .Values.descheduler.tls.existingSecret "values" (list .Values.descheduler.tls.cert .Values.descheduler.tls.key .Values.descheduler.tls.serverCA)) }}
{{- end }}
{{- define "greensched.dispatchTLSSource" -}}
{{- include "greensched.source" (dict "what" "dispatch.tls" "existing" .Values.dispatch.tls.existingSecret "values" (list .Values.dispatch.tls.cert .Values.dispatch.tls.key .Values.dispatch.tls.ca .Values.dispatch.tls.clientCA)) }}
{{- end }}
{{- define "greensched.kueueClientTLSSource" -}}
{{- include "greensched.source" (dict "what" "kueue.clientTLS" "existing" .Values.kueue.clientTLS.existingSecret "values" (list .Values.kueue.clientTLS.cert .Values.kueue.clientTLS.key)) }}
{{- end }}
{{- define "greensched.tokenSource" -}}
{{- include "greensched.source" (dict "what" "auth" "existing" .Values.auth.existingSecret "values" (list .Values.auth.token)) }}
{{- end }}
{{- define "greensched.workersSource" -}}
{{- $given := list }}
{{- range $name, $c := .Values.dispatch.clusters }}{{ $given = append $given (default "" $c.token) }}{{ $given = append $given (default "" $c.ca) }}{{ end }}
{{- $s := include "greensched.source" (dict "what" "dispatch.workers" "existing" .Values.dispatch.workers.existingSecret "values" $given) }}
{{- if eq $s "generate" }}values{{ else }}{{ $s }}{{ end }}
{{- end }}

{{/* Secret names: the existing one, else the chart's. */}}
{{- define "greensched.tokenSecret" -}}
{{- default (printf "%s-token" (include "greensched.fullname" .)) .Values.auth.existingSecret }}
{{- end }}
{{- define "greensched.dispatchTLSSecret" -}}
{{- default (printf "%s-dispatch-tls" (include "greensched.fullname" .)) .Values.dispatch.tls.existingSecret }}
{{- end }}
{{- define "greensched.kueueClientTLSSecret" -}}
{{- default (printf "%s-kueue-client-tls" (include "greensched.fullname" .)) .Values.kueue.clientTLS.existingSecret }}
{{- end }}
{{- define "greensched.extenderTLSSecret" -}}
{{- default (printf "%s-extender-tls" (include "greensched.fullname" .)) .Values.extender.tls.existingSecret }}
{{- end }}
{{- define "greensched.schedulerTLSSecret" -}}
{{- default (printf "%s-scheduler-tls" (include "greensched.fullname" .)) .Values.scheduler.tls.existingSecret }}
{{- end }}
{{- define "greensched.deschedulerTLSSecret" -}}
{{- default (printf "%s-descheduler-tls" (include "greensched.fullname" .)) .Values.descheduler.tls.existingSecret }}
{{- end }}
{{- define "greensched.workersSecret" -}}
{{- default (printf "%s-workers" (include "greensched.fullname" .)) .Values.dispatch.workers.existingSecret }}
{{- end }}

{{/* Claim and ConfigMap names. */}}
{{- define "greensched.extenderStateClaim" -}}
{{- default (printf "%s-extender-state" (include "greensched.fullname" .)) .Values.extender.persistence.existingClaim }}
{{- end }}
{{- define "greensched.dispatchJournalClaim" -}}
{{- default (printf "%s-dispatch-journal" (include "greensched.fullname" .)) .Values.dispatch.journal.existingClaim }}
{{- end }}
{{- define "greensched.dispatchDataClaim" -}}
{{- default (printf "%s-dispatch-data" (include "greensched.fullname" .)) .Values.dispatch.data.existingClaim }}
{{- end }}
{{- define "greensched.dispatchData.enabled" -}}
{{- if or .Values.dispatch.data.existingClaim .Values.dispatch.data.create }}true{{ end }}
{{- end }}
{{- define "greensched.nodesConfigMap" -}}
{{- if and .Values.extender.nodes.existingConfigMap .Values.extender.nodes.json }}
{{- fail "extender.nodes: give either existingConfigMap or json, not both" }}
{{- end }}
{{- default (printf "%s-nodes" (include "greensched.fullname" .)) .Values.extender.nodes.existingConfigMap }}
{{- end }}
{{- define "greensched.nodes.enabled" -}}
{{- if or .Values.extender.nodes.existingConfigMap .Values.extender.nodes.json }}true{{ end }}
{{- end }}

{{/* Service DNS names. */}}
{{- define "greensched.extenderHost" -}}
{{- printf "%s-extender.%s.svc" (include "greensched.fullname" .) .Release.Namespace }}
{{- end }}
{{- define "greensched.extenderURL" -}}
{{- printf "%s://%s:%v" (ternary "https" "http" .Values.extender.tls.enabled) (include "greensched.extenderHost" .) .Values.extender.port }}
{{- end }}
{{- define "greensched.dispatchHost" -}}
{{- printf "%s-dispatch.%s.svc" (include "greensched.fullname" .) .Release.Namespace }}
{{- end }}
{{- define "greensched.dispatchURL" -}}
{{- if .Values.kueue.dispatchURL }}{{ .Values.kueue.dispatchURL }}
{{- else if not .Values.dispatch.enabled }}{{ fail "kueue.dispatchURL: needed when dispatch.enabled is false" }}
{{- else }}{{ printf "%s://%s:%v" (ternary "https" "http" .Values.dispatch.tls.enabled) (include "greensched.dispatchHost" .) .Values.dispatch.port }}
{{- end }}
{{- end }}

{{/* forecast serve's --model: an absolute path as it is, else under the data folder. */}}
{{- define "greensched.forecastModel" -}}
{{- if hasPrefix "/" .Values.forecast.model }}{{ .Values.forecast.model }}{{ else }}/data/{{ .Values.forecast.model }}{{ end }}
{{- end }}
{{/* forecast serve's probe: GET /healthz on its loopback port answers 200. */}}
{{- define "greensched.forecastProbe" -}}
{{- $get := printf "exec 3<>/dev/tcp/127.0.0.1/%d && printf 'GET /healthz HTTP/1.0\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '" (int .Values.forecast.port) }}
{{- printf "[/bin/bash, -c, %s]" ($get | quote) }}
{{- end }}
{{/* The zones the clusters' forecastZone name, sorted, comma-separated. */}}
{{- define "greensched.forecastZones" -}}
{{- $zones := list }}
{{- range $name, $c := .Values.dispatch.clusters }}
{{- with $c.forecastZone }}{{ $zones = append $zones . }}{{ end }}
{{- end }}
{{- $zones | uniq | sortAlpha | join "," }}
{{- end }}

{{/* The checks that no single template makes: insecure modes must be asked for. */}}
{{- define "greensched.validate" -}}
{{- if and .Values.extender.enabled (not .Values.extender.tls.enabled) (not .Values.extender.insecure) }}
{{- fail "extender.tls.enabled=false serves plain HTTP on the pod network: set extender.insecure=true to accept that (read its comment in values.yaml)" }}
{{- end }}
{{- if and .Values.dispatch.enabled (not .Values.dispatch.tls.enabled) (not .Values.dispatch.insecure) }}
{{- fail "dispatch.tls.enabled=false serves plain HTTP with no token: set dispatch.insecure=true to accept that (read its comment in values.yaml)" }}
{{- end }}
{{- if and .Values.extender.tls.enabled .Values.extender.insecure }}
{{- fail "extender: tls.enabled and insecure are both set; choose one" }}
{{- end }}
{{- if and .Values.dispatch.tls.enabled .Values.dispatch.insecure }}
{{- fail "dispatch: tls.enabled and insecure are both set; choose one" }}
{{- end }}
{{- if and .Values.dispatch.tls.clientAuth (not .Values.dispatch.tls.enabled) }}
{{- fail "dispatch.tls.clientAuth needs dispatch.tls.enabled" }}
{{- end }}
{{- $_ := include "greensched.descheduler.enabled" . }}
{{- if .Values.forecast.enabled }}
{{- if not .Values.dispatch.enabled }}
{{- fail "forecast.enabled needs dispatch.enabled: forecast serve runs in dispatch's pod, for it" }}
{{- end }}
{{- if not (include "greensched.dispatchData.enabled" .) }}
{{- fail "forecast.enabled needs dispatch's data folder (dispatch.data.existingClaim or dispatch.data.create): forecast serve reads the zones' series there" }}
{{- end }}
{{- end }}
{{- range $name, $c := .Values.dispatch.clusters }}
{{- if $c.forecastZone }}
{{- if not $.Values.forecast.enabled }}
{{- fail (printf "dispatch.clusters.%s.forecastZone needs forecast.enabled" $name) }}
{{- end }}
{{- if $c.carbonForecast }}
{{- fail (printf "dispatch.clusters.%s: give carbonForecast or forecastZone, not both" $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- if gt (int .Values.kueue.replicas) 1 }}{{ if not .Values.kueue.leaderElect }}
{{- fail "kueue.replicas > 1 needs kueue.leaderElect (two leaders would nominate the same Workloads)" }}
{{- end }}{{ end }}
{{- end }}

{{/* The pod security settings every greensched container shares. */}}
{{- define "greensched.containerSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end }}
