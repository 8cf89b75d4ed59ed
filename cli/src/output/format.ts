// Renders a JSON answer in the chosen format. yaml is imported only when asked for.
import type { OutputFormat } from '../global-options.js';
import { renderTable } from './table.js';

export async function formatValue(value: unknown, format: OutputFormat): Promise<string> {
  switch (format) {
    case 'json':
      return `${JSON.stringify(value, null, 2)}\n`;
    case 'yaml': {
      const { stringify } = await import('yaml');
      return stringify(value);
    }
    case 'table':
      return renderTable(value);
  }
}
