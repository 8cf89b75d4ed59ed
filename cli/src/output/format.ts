// Renders a JSON answer in the chosen format. yaml is imported only when asked for.
import type { OutputFormat } from '../global-options.js';
import { renderTable, type Column } from './table.js';

/** `columns` choose what a table of a list shows (output/columns.ts); the other formats show everything. */
export async function formatValue(
  value: unknown,
  format: OutputFormat,
  columns?: readonly Column[],
): Promise<string> {
  switch (format) {
    case 'json':
      return `${JSON.stringify(value, null, 2)}\n`;
    case 'yaml': {
      const { stringify } = await import('yaml');
      return stringify(value);
    }
    case 'table':
      return renderTable(value, columns);
  }
}
